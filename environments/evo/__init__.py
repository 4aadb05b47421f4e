"""The ``evo`` family (EvoEnv): environments written as code, admitted through staged validation
in the sandbox, kept in a store and served as ``evo/<name>``; and ``evo/construct``, the
construction loop as an environment. All of it rests on the store, which the core opens in each
serving process through ``EXTENSION``."""

from environments.evo.family import EvoFamily

EXTENSION = EvoFamily()
