"""`python -m myrm_tui`: the same entry as the `myrm` script (entry.py)."""

from myrm_tui.entry import main

main()
