"""VCD export of counterexample traces."""

from __future__ import annotations

from .api import Counterexample


def _ident(i: int) -> str:
    chars = [chr(33 + i % 94)]
    i //= 94
    while i:
        chars.append(chr(33 + i % 94))
        i //= 94
    return "".join(chars)


def render_vcd(cex: Counterexample, widths: dict[str, int] | None = None) -> str:
    """The trace as VCD: a clock, then every signal per cycle, the prefix followed by one
    unrolled lap of the loop (marked by a ``loop`` wire that is 1 in the repeated cycles)."""
    widths = dict(widths or {})
    names = sorted(cex.signals)
    for n in names:
        if n not in widths:
            widths[n] = max(1, max((v.bit_length() for v in cex.signals[n]), default=1))
    lines = [
        "$date counterexample $end",
        "$version envserver sva checker $end",
        "$timescale 1ns $end",
        "$scope module pec $end",
        "$var wire 1 ! clk $end",
        '$var wire 1 " loop $end',
    ]
    ids = {n: _ident(i + 2) for i, n in enumerate(names)}
    for n in names:
        lines.append(f"$var wire {widths[n]} {ids[n]} {n} $end")
    lines += ["$upscope $end", "$enddefinitions $end"]
    cycles = list(range(cex.length)) + list(range(cex.loop_start, cex.length))
    prev: dict[str, int | None] = dict.fromkeys(names)
    for step, t in enumerate(cycles):
        lines.append(f"#{step * 10}")
        lines.append("1!")
        lines.append(f'{int(step >= cex.length)}"')
        for n in names:
            v = cex.signals[n][t]
            if prev[n] != v or step == 0:
                lines.append(f"{v}{ids[n]}" if widths[n] == 1 else f"b{v:b} {ids[n]}")
                prev[n] = v
        lines.append(f"#{step * 10 + 5}")
        lines.append("0!")
    lines.append(f"#{len(cycles) * 10}")
    return "\n".join(lines) + "\n"
