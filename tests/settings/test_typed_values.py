"""Typed Settings: settings/typed_values.py is generated from the schema and must match it."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from myrm_tui.settings import gen_typed, typed_values
from myrm_tui.settings.schema import SETTINGS
from myrm_tui.settings.settings import Settings


def test_the_generated_file_is_up_to_date_with_the_schema():
    on_disk = gen_typed.TARGET.read_text(encoding="utf-8")
    assert on_disk == gen_typed.render(), f"settings/typed_values.py is stale: run `{gen_typed.GENERATOR}`"


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda spec: spec.key)
def test_every_setting_has_a_typed_property_and_a_typed_change(spec):
    prop = getattr(typed_values.SettingValues, spec.key)
    assert isinstance(prop, property)
    returned = typing.get_type_hints(prop.fget)["return"]
    changed = typing.get_type_hints(typed_values.SettingChanges)[spec.key]
    assert returned == changed
    if spec.choices:
        assert typing.get_args(returned) == spec.choices
    else:
        assert returned is spec.type


def test_literal_types_only_for_settings_with_choices():
    spec = next(s for s in SETTINGS if s.choices)
    assert gen_typed.annotation(spec) == gen_typed.alias_name(spec.key)
    plain = next(s for s in SETTINGS if not s.choices and s.type is float)
    assert gen_typed.annotation(plain) == "float"
    nullable = dataclasses.replace(plain, default=None)
    assert gen_typed.annotation(nullable) == "float | None"


def test_no_setting_name_hides_a_field_or_method_of_settings():
    own = {f.name for f in dataclasses.fields(Settings)} | {"with_values", "_value"}
    assert not own & {spec.key for spec in SETTINGS}


def test_values_read_through_the_properties_like_before():
    settings = Settings()
    for spec in SETTINGS:
        assert getattr(settings, spec.key) == spec.default
    changed = settings.with_values(approval="yolo", bash_timeout=5.0)
    assert (changed.approval, changed.bash_timeout) == ("yolo", 5.0)
    assert changed.sources["approval"] == "override" and settings.approval == "ask"
    with pytest.raises(KeyError):
        settings.with_values(no_such_setting=1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        settings.no_such_setting  # type: ignore[attr-defined]  # noqa: B018


def test_settings_stay_frozen():
    settings = Settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.values = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        settings.model = "other"  # type: ignore[misc]
