"""The contenders of the context benchmarks: myrm, four peers (two rows each), four documented
policies and two baselines, all behind one interface (`bench.contenders.base.Contender`).

Peers import lazily: in an environment without them (the project venv, CI) their rows say
"not installed" instead of failing; install them with `bash bench/setup.sh`.
"""

from __future__ import annotations

from bench.contenders.aider_summary import Aider, AiderAtBudget
from bench.contenders.base import Contender, RunConfig, StepContender
from bench.contenders.baselines import NaiveTruncation, Raw
from bench.contenders.claude_code_policy import ClaudeCodePolicy
from bench.contenders.codex_policy import CodexPolicy
from bench.contenders.hermes import Hermes, HermesAtBudget
from bench.contenders.jetbrains_mask_policy import JetbrainsMaskPolicy
from bench.contenders.langchain_trim import LangchainTrim, LangchainTrimAtBudget
from bench.contenders.litellm_trim import LitellmTrim, LitellmTrimAtBudget
from bench.contenders.myrm import Myrm
from bench.contenders.opencode_policy import OpencodePolicy

ALL: tuple[type[Contender], ...] = (
    Myrm,
    Hermes,
    HermesAtBudget,
    Aider,
    AiderAtBudget,
    LangchainTrim,
    LangchainTrimAtBudget,
    LitellmTrim,
    LitellmTrimAtBudget,
    CodexPolicy,
    OpencodePolicy,
    ClaudeCodePolicy,
    JetbrainsMaskPolicy,
    Raw,
    NaiveTruncation,
)
BY_NAME = {c.name: c for c in ALL}
BASELINES = ("myrm", "raw", "naive-truncation")
PEERS = tuple(c.name for c in ALL if c.family == "peer")

__all__ = ["ALL", "BASELINES", "BY_NAME", "PEERS", "Contender", "RunConfig", "StepContender"]
