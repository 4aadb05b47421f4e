"""The ``alfworld`` family: ALFWorld's household tasks in text, on generated games or ALFWorld's
released ones, played by a native engine proven identical to ALFWorld's own or by ALFWorld's
engine itself."""

import importlib.util
from pathlib import Path

from environments.family import Contents, Family, OptionValue


def _contents() -> Contents:
    from environments.alfworld.family import AlfWorldEnv
    from environments.alfworld.page import PageRenderer
    from environments.alfworld.search import SEARCH
    from verifiers.base import Unavailable

    env = AlfWorldEnv()
    # ALFWorld's own engine is an opt-in extra (it builds Fast Downward from source): where it is
    # absent the catalogue says so, with the line that installs it; the native engine serves
    # every generated game anyway.
    engine = ("alfworld", "textworld", "fast_downward")
    missing = [name for name in engine if importlib.util.find_spec(name) is None]
    textworld = Unavailable(
        f"ALFWorld's own engine is not installed ({', '.join(missing)} missing); the native "
        "engine serves every generated game",
        "pip install 'envserver[alfworld]'",
    )
    return Contents(
        environments=(env,),
        renderers={env.spec.id: PageRenderer()},
        unavailable={OptionValue(env.spec.id, "engine", "textworld"): textworld} if missing else {},
        search=SEARCH,
    )


FAMILY = Family(
    name="alfworld",
    load=_contents,
    suite=Path(__file__).with_name("redteam.toml"),
    tools="environments.alfworld.cli",
)
