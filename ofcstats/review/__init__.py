"""Decision review: what each logged placement cost, and a hand replayer.

- :mod:`ofcstats.review.core`: candidates of a position valued by rollouts, the
  fantasyland sets solved exactly;
- :mod:`ofcstats.review.store`: positions from the store, verdicts into ``decisions``;
- :mod:`ofcstats.review.summary`: EV loss per player, the biggest mistakes;
- :mod:`ofcstats.review.replay`: a hand as an HTML page, street by street;
- :mod:`ofcstats.review.session_page`: a session's hands on one page.
"""
