"""The store for people: an episode's page as an HTML form, rendered where the engine lives (a
worker process), so the server process never loads the catalogue, the index or the tagger."""

from __future__ import annotations

import html
from typing import Any

from environments.base import JSONValue
from environments.webshop.engine import EpisodeState
from environments.webshop.family import WebShopEnv
from environments.webshop.pages import render_html_body

SEARCH_BOX = (
    '<input id="search_input" type="text" name="query" maxlength="10000" autofocus '
    'placeholder="Search..."/> <button id="search_button" type="submit" name="action" '
    'value="search">Search</button>'
)


def _clickable(action: str, inner: str) -> str:
    return f'<button type="submit" name="action" value="{html.escape(action)}">{inner}</button>'


def store_body(state: JSONValue, token: str, step: dict[str, Any] | None) -> str:
    """The page ``state`` shows: every clickable a submit button of one form carrying the
    state ``token``; after Buy Now, the reward and its parts. ``step`` is the last step's
    answer (``status``, ``detail``, ``reward``, ``components``, ``info``), if any."""
    env = WebShopEnv()
    page = env.engine.page(EpisodeState.from_json(state, env.shop))
    notice = ""
    if step is not None and step["status"] == "invalid":
        notice = f"<p class='error' id='notice'>{html.escape(step['detail'])}</p>"
    if page.name == "done" and step is not None:
        return notice + _breakdown(step)
    return (
        f"{notice}<form method='post' action='/webshop/step' id='page' data-page='{page.name}'>"
        f"<input type='hidden' name='token' value='{html.escape(token)}'/>"
        f"{render_html_body(page, _clickable, SEARCH_BOX)}</form>"
    )


def _breakdown(step: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{value:g}</td></tr>"
        for name, value in step["components"].items()
    )
    purchase = step["info"].get("purchase") or {}
    reward = "error" if step["reward"] is None else f"{step['reward']:.4f}"
    return (
        "<h3>Thank you for shopping with us!</h3>"
        f"<p>Your score (min 0.0, max 1.0): <span class='reward' id='reward'>{reward}</span></p>"
        f"<p id='detail'>{html.escape(step['detail'])}</p>"
        f"<p>Purchased {html.escape(str(purchase.get('asin', '')))} with options "
        f"{html.escape(str(purchase.get('options', {})))}</p>"
        f"<table id='components'><tr><th>part</th><th>value</th></tr>{rows}</table>"
        "<p><a href='/webshop' id='again'>Shop again</a></p>"
    )
