"""``python -m ofcstats``: the ``ofcstats`` command."""

from ofcstats.entry import main

if __name__ == "__main__":
    main()
