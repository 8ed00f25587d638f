"""Benchmarks for myrm's context engine: a seeded workload generator, real captured sessions, and
a scorer that recomputes every figure from the prompts an engine sent (it trusts no engine report).

Not part of the installed package: run from the repository root, e.g.
`python -m bench workload --kind coding --turns 400 --seed 1 --out /tmp/coding.jsonl`.
The session and output formats are in docs/replay-format.md; results and their reading in
docs/benchmarks.md.
"""
