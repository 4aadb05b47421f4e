"""The ``alfworld`` family: ALFWorld's household tasks in text, on generated games (a native
engine proven identical to ALFWorld's own) or on ALFWorld's engine and released games."""

from environments.alfworld.family import AlfWorldEnv
from environments.alfworld.page import PageRenderer

ENVIRONMENTS = (AlfWorldEnv(),)
RENDERERS = {"alfworld": PageRenderer()}
