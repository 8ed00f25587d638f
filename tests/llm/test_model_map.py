"""The registry reads litellm's bundled model map from its file (llm/models/litellm_map.py) instead of
importing litellm (5-15 s) for it: `myrm models` and `myrm doctor` must answer in about a second."""

from __future__ import annotations

import subprocess
import sys

from myrm_tui.llm.litellm_module import load_litellm


def test_the_map_read_from_the_file_is_litellms_own_table():
    from myrm_tui.llm.models.litellm_map import load_model_map

    ours = load_model_map()
    theirs = load_litellm().model_cost
    assert set(ours) == set(theirs) - {"sample_spec"}  # litellm keeps its schema example as a row
    assert all(dict(ours[name]) == dict(theirs[name]) for name in ours), "alias rows expanded the same way"


def test_listing_and_checking_models_never_imports_litellm():
    code = (
        "import sys\n"
        "from myrm_tui.llm.models import registry\n"
        "assert registry.search('gpt4o', limit=3)[0].name == 'openai/gpt-4o'\n"
        "from myrm_tui.llm.models.check import unknown_model_problem\n"
        "assert unknown_model_problem('gpt4o') is not None\n"
        "assert unknown_model_problem('anthropic/claude-sonnet-4-5') is None\n"
        "assert registry.info('openai/llama3', {'openai/llama3': {'api_base': 'http://127.0.0.1:9/v1'}}).name\n"
        "print('litellm' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
