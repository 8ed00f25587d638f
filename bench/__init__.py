"""Benchmarks for myrm's context engine: a seeded workload generator, real captured sessions, and
a scorer that recomputes every figure from the prompts an engine sent (it trusts no engine report).

Not part of the installed package: run from the repository root, e.g.
`python -m bench workload --kind coding --turns 400 --seed 1 --out /tmp/coding.jsonl`.
The session and output formats are in docs/replay-format.md; results and their reading in
docs/benchmarks.md.
"""

# The bench drives myrm with its test providers (scripted/, replay/, replay-summarizer/), in process
# and in the `myrm` subprocesses it starts; importing myrm_tui first also keeps litellm from reading
# a `.env` (myrm_tui/_offline_env.py) whichever bench module imports litellm.
from myrm_tui.llm.fake_providers.switch import enable_in_this_process  # noqa: E402

enable_in_this_process()
