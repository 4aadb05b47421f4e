"""The ``alfworld`` family: ALFWorld's household tasks in text, on generated games or ALFWorld's
released ones, played by a native engine proven identical to ALFWorld's own or by ALFWorld's
engine itself."""

from environments.alfworld.family import AlfWorldEnv
from environments.alfworld.page import PageRenderer

ENVIRONMENTS = (AlfWorldEnv(),)
RENDERERS = {"alfworld": PageRenderer()}
