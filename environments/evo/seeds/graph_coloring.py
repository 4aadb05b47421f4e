"""Planted graph 3-colouring: a constraint search to solve, an edge scan to verify."""

import random
import re
from typing import Any

NAME = "planted_graph_coloring"
DESCRIPTION = "Colour the vertices with colours 1-3 so that no edge joins two equal colours."
DIFFICULTIES = [1, 2, 3, 4, 5]
ANSWER_FORMAT = "<answer>the colour of vertex 1, 2, ... separated by spaces</answer>"


def generate(seed: int, difficulty: int) -> dict[str, Any]:
    rng = random.Random(f"{NAME}/{seed}/{difficulty}")
    count = 5 + 3 * difficulty
    planted = [rng.randint(1, 3) for _ in range(count)]
    edges = [
        [a + 1, b + 1]
        for a in range(count)
        for b in range(a + 1, count)
        if planted[a] != planted[b] and rng.random() < 0.5
    ]
    return {"vertices": count, "edges": edges, "planted": planted}


def prompt(instance: dict[str, Any]) -> str:
    edges = " ".join(f"{a}-{b}" for a, b in instance["edges"])
    return (
        f"A graph on vertices 1..{instance['vertices']} with edges: {edges}\nGive every vertex "
        f"a colour 1, 2 or 3 so that the ends of each edge differ. Reply with {ANSWER_FORMAT}."
    )


def reference(instance: dict[str, Any]) -> str:
    return f"<answer>{' '.join(map(str, instance['planted']))}</answer>"


def score(instance: dict[str, Any], response: str) -> float | None:
    found = re.findall(r"<answer>(.*?)</answer>", response, re.DOTALL)
    if not found:
        return None
    tokens = found[-1].replace(",", " ").split()
    if not tokens or not all(token.isdigit() for token in tokens):
        return None
    colours = [int(token) for token in tokens]
    if len(colours) != instance["vertices"] or not all(1 <= c <= 3 for c in colours):
        return 0.0
    proper = all(colours[a - 1] != colours[b - 1] for a, b in instance["edges"])
    return 1.0 if proper else 0.0
