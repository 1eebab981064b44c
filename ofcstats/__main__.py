"""``python -m ofcstats``: the ``ofcstats`` command."""

from ofcstats.cli import main

if __name__ == "__main__":
    main()
