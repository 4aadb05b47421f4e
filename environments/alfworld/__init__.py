"""The ``alfworld`` family: ALFWorld's household tasks in text, on generated games or ALFWorld's
released ones, played by a native engine proven identical to ALFWorld's own or by ALFWorld's
engine itself."""

import importlib.util

from environments.alfworld.family import AlfWorldEnv
from environments.alfworld.page import PageRenderer
from verifiers.base import Unavailable

ENVIRONMENTS = (AlfWorldEnv(),)
RENDERERS = {"alfworld": PageRenderer()}

# ALFWorld's own engine is an opt-in extra (it builds Fast Downward from source): where it is
# absent the catalogue says so, with the line that installs it; the native engine serves anyway.
_ENGINE = ("alfworld", "textworld", "fast_downward")
_MISSING = [name for name in _ENGINE if importlib.util.find_spec(name) is None]
UNAVAILABLE: dict[str, Unavailable] = (
    {
        "alfworld?engine=textworld": Unavailable(
            f"ALFWorld's own engine is not installed ({', '.join(_MISSING)} missing); the "
            "native engine serves every generated game",
            "pip install 'envserver[alfworld]'",
        )
    }
    if _MISSING
    else {}
)
"""The textworld engine (and with it ALFWorld's released games) when its extra is absent."""
