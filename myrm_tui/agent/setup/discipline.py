"""Per-model discipline: a short static block added to the system prompt for a model family.

Why per family: each family has habits that hurt in an agent loop, and a line that corrects one
family is noise (or harm) for another. Why static: the block follows the base prompt in the
cached prefix, so it is fixed text chosen once per agent build from the model name; it changes
only when the model changes, which already changes the fingerprint and starts a new cache.
Models of no known family (local, scripted, replayed) get no block, so their prompts are the
bare mode text.
"""

from __future__ import annotations

from myrm_tui.context.rows.family import ANTHROPIC, OPENAI, REASONING_TOOLS, family_of

GPT = "gpt"  # OpenAI GPT and o-series, Codex, xAI Grok
GEMINI = "gemini"  # Google Gemini and Gemma
CLAUDE = "claude"
DEEPSEEK_QWEN_GLM = "deepseek-qwen-glm"  # open-weight reasoning models (also Kimi, MiMo, MiniMax)
DISCIPLINE_FAMILIES = (GPT, GEMINI, CLAUDE, DEEPSEEK_QWEN_GLM)

# Names context/rows/family.py does not place in OPENAI but that share the GPT habits (Grok is served
# through xAI's OpenAI-style API and loops the same way; Codex names may lack a "gpt-" prefix).
_GPT_MARKERS = ("grok", "xai/", "codex")
_GEMINI_MARKERS = ("gemini", "gemma")

_BLOCKS = {
    # GPT/Codex/Grok tend to end a turn on a plan ("I will now…") without the tool call, to ask
    # leave for work already asked for, and to make independent reads one per step.
    GPT: (
        "- Make independent tool calls (several reads or searches) together in one step.\n"
        "- Never end a turn on a plan or a promise to act: make the tool calls, then report.\n"
        "- Do not ask whether to go on with work the user already asked for."
    ),
    # Gemini/Gemma tend to edit a file they have not read, to fill gaps with plausible but
    # invented contents or results, and to repeat a failing call unchanged.
    GEMINI: (
        "- State the exact path before each edit; edit only text you have read with file_read.\n"
        "- Never invent file contents or tool output; when unsure, read or search first.\n"
        "- If the same call failed twice, change the approach instead of repeating it."
    ),
    # Claude tends to rewrite whole files with file_write for small changes and to add files,
    # docs or features nobody asked for.
    CLAUDE: (
        "- Change existing files with file_edit; keep file_write for new files.\n"
        "- Do not add files, documentation or features the user did not ask for."
    ),
    # DeepSeek/Qwen/GLM tend to emit malformed argument JSON, to spill reasoning into arguments,
    # and to write tool calls as text in the reply instead of through the tool interface.
    DEEPSEEK_QWEN_GLM: (
        "- Tool arguments must be one valid JSON object that matches the schema; put no reasoning "
        "or comments inside them.\n"
        "- Call tools only through the tool interface; never write a tool call as text in the reply."
    ),
}


def discipline_family(model: str) -> str | None:
    """The discipline family of a model name (None: no block). Pure: same name, same answer."""
    family = family_of(model)
    if family == ANTHROPIC:
        return CLAUDE
    if family == REASONING_TOOLS:
        return DEEPSEEK_QWEN_GLM
    name = model.lower()
    if any(marker in name for marker in _GEMINI_MARKERS):
        return GEMINI
    if family == OPENAI or any(marker in name for marker in _GPT_MARKERS):
        return GPT
    return None


def discipline_block(model: str) -> str:
    """The tagged block for a model's family ('' when it has none)."""
    family = discipline_family(model)
    if family is None:
        return ""
    return f"<discipline>\n{_BLOCKS[family]}\n</discipline>"
