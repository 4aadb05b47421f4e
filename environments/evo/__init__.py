"""The ``evo`` family (EvoEnv): environments written as code, admitted through staged validation
in the sandbox, kept in a store and served as ``evo/<name>``; and ``evo/construct``, the
construction loop as an environment."""

from environments.evo.construct import Construct
from environments.evo.routes import router
from environments.evo.served import POOL

ENVIRONMENTS = (Construct(),)
DYNAMIC = POOL
ROUTERS = (router,)
