"""How many examples the property tests draw: one constant for the suite, chosen by a profile.

Why one constant: the property tests were a large share of the suite's wall time, each with its
own hard-coded `max_examples`. Every test now writes its count as `examples(n)`, `n` being the
count it was tuned with; the loaded profile scales all of them at once. `--hypothesis-profile=deep`
runs every test at its full count with fresh random inputs (the nightly-style run,
docs/testing.md); CI and everyday runs draw a share of it.

Profiles (registered by tests/conftest.py, which loads `ci` when `CI` is set, else `dev`):
- `ci`: derandomized (a landing is never decided by which random examples a run drew), scaled.
- `dev`: random, scaled: a developer's runs keep exploring new inputs.
- `deep`: random, full counts.
"""

from __future__ import annotations

from hypothesis import settings

# Hypothesis's own default count: the `deep` profile's, and what a test's `examples(n)` is
# written against (under `deep`, `examples(n) == n`).
FULL_EXAMPLES = 100
# The everyday share of the full counts (a half): the property tests' time halves (e.g.
# tests/context/test_spill_without_vault.py, 25.7 s under `deep`, 12.7 s) while each test still
# draws tens of examples; the mutants tried were killed at both counts (docs/testing.md).
SCALED_EXAMPLES = 50
# No test is scaled below this many examples (nor above its own count): fewer examples stop
# covering the strategies' corners (empty, one-element and boundary values come first).
MIN_EXAMPLES = 10


def register() -> None:
    """Register the three profiles and load the everyday one (pytest's --hypothesis-profile,
    read after the root conftest is imported, overrides it)."""
    import os

    settings.register_profile("ci", derandomize=True, print_blob=True, max_examples=SCALED_EXAMPLES)
    settings.register_profile("dev", max_examples=SCALED_EXAMPLES)
    settings.register_profile("deep", print_blob=True, max_examples=FULL_EXAMPLES)
    settings.load_profile("ci" if os.environ.get("CI") else "dev")


def examples(full: int) -> int:
    """`full` (the count a test was tuned with) scaled by the loaded profile's share, never below
    `min(full, MIN_EXAMPLES)`. Read when the test module is imported, after the profile loaded."""
    loaded = settings.default
    assert loaded is not None, "a profile is loaded on import"
    scaled = round(full * loaded.max_examples / FULL_EXAMPLES)
    return max(min(full, MIN_EXAMPLES), scaled)
