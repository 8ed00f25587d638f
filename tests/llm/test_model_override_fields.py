"""The `[models."NAME"]` keys (settings) and the fields the registry overrides (llm) are one list.

Settings sit below llm, so the list lives in settings and is typed by hand; this checks it against
`ModelInfo`, the dataclass the override lands on, so a renamed or retyped field cannot drift.
"""

from __future__ import annotations

import dataclasses

from myrm_tui.llm.models.info import ModelInfo
from myrm_tui.llm.models.registry import OVERRIDABLE_FIELDS, info
from myrm_tui.settings.config_files.loader import MODEL_OVERRIDE_TYPES

# ModelInfo's annotations are strings (postponed evaluation); a config file writes no None, so an
# optional text field takes text.
_CONFIG_TYPE = {"int": int, "float": float, "bool": bool, "str": str, "str | None": str}


def test_every_override_key_is_a_model_info_field_of_that_type():
    fields = {f.name: _CONFIG_TYPE.get(str(f.type)) for f in dataclasses.fields(ModelInfo)}
    wrong = {key: kind for key, kind in MODEL_OVERRIDE_TYPES.items() if fields.get(key) is not kind}
    assert not wrong, f"override keys that are not ModelInfo fields of that type: {wrong}"


def test_the_registry_overrides_exactly_the_keys_the_loader_accepts():
    assert tuple(MODEL_OVERRIDE_TYPES) == OVERRIDABLE_FIELDS
    assert "context_window" in OVERRIDABLE_FIELDS and "name" not in OVERRIDABLE_FIELDS


def test_an_override_changes_only_listed_fields():
    name = "openai/a-model-no-registry-knows"
    changed = info(name, {name: {"context_window": 64000, "name": "other", "supports_vision": True}})
    assert (changed.context_window, changed.supports_vision, changed.name) == (64000, True, name)
