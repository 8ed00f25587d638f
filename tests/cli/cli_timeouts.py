"""How long a test waits for one `myrm` subprocess: its own module, so a test imports it by a name
no other folder's conftest shares (a bare `from conftest import` picks whichever conftest pytest
loaded first)."""

# A cold subprocess imports litellm (several seconds on a loaded 2-core machine).
CLI_TIMEOUT_S = 180
