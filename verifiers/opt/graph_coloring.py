"""Graph colouring: a positive colour per vertex, adjacent vertices differ; minimise the number
of distinct colours."""

from __future__ import annotations

from typing import Any

from verifiers.opt.answer import int_list
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Number of distinct colours of a proper colouring ``[c_0, c_1, ...]`` (colour of vertex
    0, 1, ...); raises on a wrong length, a non-positive colour or a monochrome edge."""
    colours = int_list(answer)
    if not colours:
        raise InvalidAnswer("no colour given")
    if len(colours) != len(instance):
        # One colour per vertex, in vertex order: any other length cannot be read as a colouring.
        raise InvalidAnswer(
            f"expected one colour for each of the {len(instance)} vertices, got {len(colours)}"
        )
    for vertex, colour in enumerate(colours):
        if colour <= 0:
            raise InvalidAnswer(f"vertex {vertex} has colour {colour}; colours are positive")
    for vertex in range(len(instance)):
        # Adjacency lists ({"0": [1, 2]}) or dict of dicts ({"0": {"1": 1}}): both iterate ids.
        for other in instance[str(vertex)]:
            if colours[int(other)] == colours[vertex]:
                raise Infeasible(
                    f"adjacent vertices {vertex} and {int(other)} share colour {colours[vertex]}"
                )
    return float(len(set(colours)))


CHECK = TaskCheck("graph_coloring", "min", evaluate)
