from myrm_tui.settings.schema import SETTINGS, SPECS_BY_KEY
from myrm_tui.settings.setting_spec import SettingSpec
from myrm_tui.settings.settings import Settings

__all__ = ["SETTINGS", "SPECS_BY_KEY", "SettingSpec", "Settings"]
