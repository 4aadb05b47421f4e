"""An SVG diagram of a circuit in SBOL Visual glyphs, for people debugging what a policy builds.

Units sit side by side on one backbone row; each part is drawn with its SBOL Visual glyph
(promoter: bent arrow; RBS: half circle; CDS: pentagon arrow; terminator: T) and labelled with
its name. Regulation arcs run above the row from the regulator's CDS to every copy of the
promoter it acts on: a bar end for inhibition, an arrow head for stimulation. Input promoters
are marked "input". Names come from the document (untrusted), so every label is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from verifiers.sbol import library
from verifiers.sbol.design import Design

STEP = 44  # horizontal space per glyph
GAP = 36  # between units
BASE = 150  # y of the backbone
TOP = 18
COLOURS = {"promoter": "#2e7d32", "RBS": "#ef6c00", "terminator": "#c62828"}
REPRESSOR, REPORTER = "#1565c0", "#f9a825"


def _glyph(role: str, x: float, name: str, inputs: Sequence[str], row: int) -> str:
    y = BASE
    if role == "promoter":
        colour = COLOURS["promoter"]
        body = (
            f'<path d="M{x - 10},{y} V{y - 26} H{x + 10}" fill="none" stroke="{colour}" '
            f'stroke-width="2.5"/><path d="M{x + 10},{y - 31} l7,5 l-7,5 z" fill="{colour}"/>'
        )
    elif role == "RBS":
        body = (
            f'<path d="M{x - 9},{y} A9,9 0 0 1 {x + 9},{y} z" fill="{COLOURS["RBS"]}" '
            'stroke="#333" stroke-width="1"/>'
        )
    elif role == "CDS":
        fill = REPORTER if name in library.REPORTERS else REPRESSOR
        body = (
            f'<path d="M{x - 16},{y - 10} H{x + 6} L{x + 16},{y} L{x + 6},{y + 10} H{x - 16} z" '
            f'fill="{fill}" stroke="#333" stroke-width="1"/>'
        )
    else:
        colour = COLOURS["terminator"]
        body = (
            f'<path d="M{x},{y} V{y - 22} M{x - 10},{y - 22} H{x + 10}" stroke="{colour}" '
            'stroke-width="2.5" fill="none"/>'
        )
    note = (
        f'<text x="{x}" y="{y - 40}" font-size="9" text-anchor="middle" fill="#2e7d32">input</text>'
        if name in inputs
        else ""
    )
    return (
        f'<g class="part {role}">{body}{note}<text x="{x}" y="{y + 24 + 11 * row}" '
        f'font-size="10" text-anchor="middle">{escape(name)}</text></g>'
    )


def svg(design: Design, inputs: Sequence[str] = ()) -> str:
    """The circuit's diagram as a standalone SVG document."""
    x = 30.0
    glyphs: list[str] = []
    backbones: list[str] = []
    cds_at: dict[str, float] = {}
    promoters_at: dict[str, list[float]] = {}
    for unit in design.units:
        start = x - STEP / 2 + 8
        for index, (name, role) in enumerate(zip(unit.parts, unit.roles, strict=True)):
            glyphs.append(_glyph(role, x, name, inputs, index % 2))
            if role == "CDS":
                cds_at.setdefault(name, x)
            elif role == "promoter":
                promoters_at.setdefault(name, []).append(x)
            x += STEP
        end = x - STEP / 2 - 8
        backbones.append(
            f'<line x1="{start}" y1="{BASE}" x2="{end}" y2="{BASE}" stroke="#333" '
            f'stroke-width="1.5"/><text x="{(start + end) / 2}" y="{BASE + 54}" font-size="11" '
            f'text-anchor="middle" fill="#555">{escape(unit.name)}</text>'
        )
        x += GAP
    arcs: list[str] = []
    for regulation in design.regulations:
        source = cds_at.get(regulation.regulator)
        if source is None:
            continue
        for target in promoters_at.get(regulation.promoter, []):
            height = 40 + 0.12 * abs(target - source)
            lift = max(TOP, BASE - 30 - height)
            marker = "bar" if regulation.sign < 0 else "arrow"
            colour = "#b71c1c" if regulation.sign < 0 else "#1b5e20"
            arcs.append(
                f'<path class="{"inhibition" if regulation.sign < 0 else "stimulation"}" '
                f'd="M{source},{BASE - 12} C{source},{lift} {target},{lift} {target},{BASE - 36}" '
                f'fill="none" stroke="{colour}" stroke-width="1.5" marker-end="url(#{marker})"/>'
            )
    width = int(x)
    height = BASE + 66
    defs = (
        '<defs><marker id="bar" viewBox="0 0 10 10" refX="5" refY="5" markerWidth="10" '
        'markerHeight="10" orient="auto"><path d="M5,0 V10" stroke="#b71c1c" '
        'stroke-width="3"/></marker><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 '
        'z" fill="#1b5e20"/></marker></defs>'
    )
    title = f"<title>{escape(design.name)}</title>"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif">{title}{defs}'
        + "".join(backbones + glyphs + arcs)
        + "</svg>"
    )
