"""The store's pages as lists of visible nodes, and the three observation renderers.

Each page is what the original's templates show, reduced to its visible text nodes in document
order; every renderer walks the same nodes, so ``text``, ``text_rich`` and ``html`` always agree:

``text``       the nodes' text joined by ``" [SEP] "`` (the original's "simple" mode)
``text_rich``  one line per node: ``[button] X [button_]`` for buttons, ``  [button] v [button_]``
               for option values (``[clicked button]`` when chosen, and "You have clicked v."
               prepended), ``\\n[button] ASIN [button_]`` for product links (``[clicked button]``
               once visited), other text verbatim
``html``       an HTML page; clickables carry ``data-action`` with the action that clicks them
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import jinja2
from markupsafe import Markup

NodeKind = Literal["text", "button", "option", "link", "search_box"]
ObservationMode = Literal["text", "text_rich", "html"]
OBSERVATION_MODES: tuple[ObservationMode, ...] = ("text", "text_rich", "html")


@dataclass(frozen=True)
class Node:
    """One visible node. ``key`` is the clickable's lower-case name (None for plain text);
    ``group`` is an option's name; ``clicked`` marks chosen options and visited products."""

    kind: NodeKind
    text: str
    key: str | None = None
    group: str | None = None
    clicked: bool = False


@dataclass(frozen=True)
class Page:
    """A page: its name (search, results, item, description, features, reviews, done) and
    nodes."""

    name: str
    nodes: tuple[Node, ...]


def text(content: str) -> Node:
    """Plain visible text."""
    return Node("text", content)


def button(label: str) -> Node:
    """A button; its clickable name is the lower-cased label, as the original's."""
    return Node("button", label, key=label.lower())


def render_text(page: Page) -> str:
    """The ``text`` ("simple") observation."""
    return " [SEP] ".join(n.text.strip() for n in page.nodes if n.text.strip())


def render_text_rich(page: Page) -> str:
    """The ``text_rich`` observation."""
    lines: list[str] = []
    clicked: list[str] = []
    for node in page.nodes:
        if not node.text.strip():
            continue
        if node.kind in ("button", "search_box"):
            lines.append(f"[button] {node.text} [button_]")
        elif node.kind == "option":
            if node.clicked:
                lines.append(f"  [clicked button] {node.text} [clicked button_]")
                clicked.append(node.text)
            else:
                lines.append(f"  [button] {node.text} [button_]")
        elif node.kind == "link":
            tag = "clicked button" if node.clicked else "button"
            lines.append(f"\n[{tag}] {node.text} [{tag}_]")
        else:
            lines.append(node.text)
    prefix = "".join(f"You have clicked {value}.\n" for value in reversed(clicked))
    return prefix + "".join(f"{line}\n" for line in lines)


TEMPLATES = Path(__file__).parent / "templates"
"""The family's templates: the ``html`` observation and the store the playground shows."""


def _escape(value: object) -> Markup:
    # html.escape's quoting (&#x27; for '), as the pages were written before templates: the
    # html observation keeps its exact bytes.
    return value if isinstance(value, Markup) else Markup(html.escape(str(value)))  # noqa: S704 - escaped


_TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    finalize=_escape,
    undefined=jinja2.StrictUndefined,
)


def render_html(page: Page) -> str:
    """The ``html`` observation: the page with each clickable a button carrying its action in
    ``data-action``."""
    return _TEMPLATES.get_template("webshop/observation.html").render(page=page)


def render(page: Page, mode: ObservationMode) -> str:
    """The observation of ``page`` in ``mode``."""
    if mode == "text":
        return render_text(page)
    if mode == "text_rich":
        return render_text_rich(page)
    return render_html(page)


def _instruction(instruction: str) -> tuple[Node, ...]:
    return (text("Instruction:"), text(instruction))


def search_page(instruction: str) -> Page:
    """The start page: logo, instruction, search box."""
    return Page(
        "search",
        (text("WebShop"), *_instruction(instruction), Node("search_box", "Search", key="search")),
    )


def results_page(
    instruction: str,
    page_num: int,
    total: int,
    products: Sequence[tuple[str, str, str]],
    visited: Sequence[str],
) -> Page:
    """A results page: ``products`` are ``(asin, title, price tag)``; "< Prev" only after page
    1, "Next >" always (as the original, even past the last page)."""
    nodes = [*_instruction(instruction), button("Back to Search")]
    nodes.append(text(f"Page {page_num} (Total results: {total})"))
    if page_num > 1:
        nodes.append(button("< Prev"))
    nodes.append(button("Next >"))
    for asin, title, price in products:
        nodes.append(Node("link", asin, key=asin.lower(), clicked=asin in visited))
        nodes.extend((text(title), text(price)))
    return Page("results", tuple(nodes))


def item_page(
    instruction: str,
    title: str,
    price_tag: str,
    options: dict[str, list[str]],
    chosen: dict[str, str],
) -> Page:
    """An item page: option groups (radio values), title, price, rating, sub-page buttons, Buy
    Now."""
    nodes = [*_instruction(instruction), button("Back to Search"), button("< Prev")]
    for name, values in options.items():
        nodes.append(Node("text", name, group=name))
        nodes.extend(
            Node("option", v, key=v, group=name, clicked=chosen.get(name) == v) for v in values
        )
    nodes.extend((text(title), text(f"Price: {price_tag}"), text("Rating: N.A.")))
    nodes.extend(button(b) for b in ("Description", "Features", "Reviews", "Buy Now"))
    return Page("item", tuple(nodes))


def sub_page(name: str, instruction: str, contents: Sequence[str]) -> Page:
    """Description (the text), Features (one node per bullet) or Reviews (always empty)."""
    nodes = (*_instruction(instruction), button("Back to Search"), button("< Prev"))
    return Page(name, (*nodes, *(text(c) for c in contents)))


def done_page(reward: float) -> Page:
    """The thank-you page with the score (the original's hidden goal dump is left out: it would
    show the agent the answer)."""
    return Page(
        "done",
        (
            text("Thank you for shopping with us!"),
            text("Your score (min 0.0, max 1.0)"),
            text(repr(reward)),
        ),
    )
