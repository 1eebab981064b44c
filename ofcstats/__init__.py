"""ofcstats: hand-history analytics for Open Face Chinese poker and 13-card Chinese poker.

The Python API is the command line's twin: one handle on a database whose methods are
the commands, each returning Polars frames with the values the command prints as JSON.

    import ofcstats
    club = ofcstats.open("club.duckdb")        # read-only; write=True to load or score
    club = ofcstats.sample()                   # or the sample data, in a temporary file

Questions (each takes the commands' filters as keywords: ruleset=, session=, since=,
until=, variant=, player=):

    club.compare()              ofcstats compare     rulesets side by side, 95% intervals
    club.players()              ofcstats players     every player under one ruleset
    club.player("alice")        ofcstats player      one player under every ruleset
    club.differences()          (player's list)      logged points that differ
    club.hands(sort="points")   ofcstats hands       one row per hand and seat
    club.review()               ofcstats review      the stored decisions' EV loss
    club.sql("SELECT ...")      ofcstats sql         any read-only query
    club.info()                 ofcstats db info     tables, counts, scoring check

Pages and charts (matplotlib Figures):

    club.replay(hand_id)        ofcstats replay      a hand street by street (.save(path))
    club.replay(session="S")    replay --session     a session on one page (player= follows)
    club.chart.cumulative("alice"), club.chart.style_map(), club.chart.royalties(),
    club.chart.comparison(), club.chart.rulesets("alice")

Writers (ofcstats.open(path, write=True)):

    club.ingest(paths, rulesets=[...])   ofcstats ingest
    club.rescore(["american"])           ofcstats rescore
    club.review(run=True, player=...)    ofcstats review

Errors are the commands' (ofcstats.errors.OfcstatsError and its family), with the same
one-line messages. See docs/python.md.

>>> import ofcstats
>>> sorted(ofcstats.__all__)
['Club', 'OfcstatsError', 'open', 'sample']
"""

from __future__ import annotations

from ofcstats.errors import OfcstatsError

TYPE_CHECKING = False  # (typing itself is not imported: it would double the import's time)
if TYPE_CHECKING:
    from typing import Any

    from ofcstats.api import Club, open, sample

__all__ = ["Club", "OfcstatsError", "open", "sample"]

_LAZY = {"Club", "open", "sample"}  # loaded on first use: they import polars and duckdb


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from ofcstats import api  # noqa: PLC0415

        return getattr(api, name)
    raise AttributeError(f"module 'ofcstats' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
