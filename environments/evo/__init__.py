"""The ``evo`` family (EvoEnv): environments written as code, admitted through staged validation
in the sandbox, kept in a store and served as ``evo/<name>``; and ``evo/construct``, the
construction loop as an environment. All of it rests on the store, which the core opens in each
serving process through the family's ``Extension`` (``family.py``)."""

from pathlib import Path

from environments.family import Contents, Family


def _contents() -> Contents:
    from environments.evo.family import EvoFamily
    from environments.evo.search import SEARCH

    return Contents(extension=EvoFamily(), search=SEARCH)


FAMILY = Family(
    name="evo",
    load=_contents,
    requires=("sqlalchemy",),
    install="envserver[evo]",
    suite=Path(__file__).with_name("redteam.toml"),
)
