"""The store for people: WebShop's renderer in the playground (``environments.renderer``).

The page is drawn from the episode's state where the engine lives (a worker process), so the
server process never loads the catalogue, the index or the tagger: every clickable a button,
the search box a text box (Enter searches), and after Buy Now the purchase.
"""

from __future__ import annotations

from typing import Any

from environments.base import JSONValue
from environments.renderer import Turn
from environments.webshop.engine import EpisodeState
from environments.webshop.family import WebShopEnv
from environments.webshop.pages import TEMPLATES


class StoreRenderer:
    """The store page of a WebShop episode."""

    templates = TEMPLATES
    template = "webshop/store.html"

    def context(self, state: JSONValue, turn: Turn) -> dict[str, Any]:
        """The page ``state`` shows, its instruction, and after Buy Now what was bought."""
        env = WebShopEnv()
        episode = EpisodeState.from_json(state, env.shop)
        return {
            "page": env.engine.page(episode),
            "instruction": episode.goal["instruction_text"],
            "purchase": turn.info.get("purchase"),
        }
