"""An episode's state: the proof built so far, as plain JSON the state token carries.

The proof is a tree ``{"method": text, "cases": [[case name, subtree], ...]}`` whose open leaves
are ``null``. The *focus* is the list of case positions from the root to the goal being worked
on; the episode always focuses the first open leaf in depth-first order (cases in Tamarin's
order), as Tamarin's own autoprover and the recorded greedy proofs do.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from environments.base import EnvironmentInputError
from environments.tamarin.model import Path
from verifiers.tamarin.proof import ProofTree

Outcome = Literal["verified", "falsified", "trace_found", "no_trace", "unfinishable"]
JSONTree = dict[str, Any] | None


def path_to(proof: JSONTree, focus: list[int]) -> Path:
    """The ``(method, case)`` steps from the root to ``focus``.

    Raises EnvironmentInputError when ``focus`` leaves the tree (a state not made here)."""
    steps: list[tuple[str, str]] = []
    node = proof
    for position in focus:
        if node is None or not 0 <= position < len(node["cases"]):
            raise EnvironmentInputError("the state's focus is not a goal of its proof")
        name, child = node["cases"][position]
        steps.append((node["method"], name))
        node = child
    if node is not None:
        raise EnvironmentInputError("the state's focus is a goal that is already solved")
    return tuple(steps)


def open_goals(proof: JSONTree, prefix: tuple[int, ...] = ()) -> Iterator[list[int]]:
    """The focus of every open leaf, in depth-first order."""
    stack: list[tuple[JSONTree, tuple[int, ...]]] = [(proof, prefix)]
    while stack:
        node, at = stack.pop()
        if node is None:
            yield list(at)
            continue
        stack.extend(
            (child, (*at, position))
            for position, (_, child) in reversed(list(enumerate(node["cases"])))
        )


def graft(proof: JSONTree, focus: list[int], method: str, cases: tuple[str, ...]) -> JSONTree:
    """``proof`` with ``method`` applied at the open leaf ``focus``, its cases open."""
    leaf: JSONTree = {"method": method, "cases": [[name, None] for name in cases]}
    if not focus:
        return leaf
    assert proof is not None  # path_to has checked the focus
    head, *rest = focus
    cases_copy = [list(pair) for pair in proof["cases"]]
    cases_copy[head][1] = graft(cases_copy[head][1], rest, method, cases)
    return {"method": proof["method"], "cases": cases_copy}


def size(proof: JSONTree) -> int:
    """Methods applied in ``proof`` (a found trace's ``SOLVED`` leaf is not one)."""
    count, stack = 0, [proof]
    while stack:
        node = stack.pop()
        if node is not None:
            count += node["method"] != "SOLVED"
            stack.extend(child for _, child in node["cases"])
    return count


def to_proof_tree(proof: JSONTree) -> ProofTree:
    """The verifier's proof tree, for rendering as a ``.spthy`` proof script."""
    if proof is None:
        return ProofTree(None)
    return ProofTree(
        proof["method"], tuple((name, to_proof_tree(child)) for name, child in proof["cases"])
    )


def check_tree(proof: Any, max_depth: int) -> None:
    """Raises EnvironmentInputError unless ``proof`` has the tree's shape and is at most
    ``max_depth`` deep (states are signed, so this guards against states of other versions)."""
    stack: list[tuple[Any, int]] = [(proof, 0)]
    while stack:
        node, depth = stack.pop()
        if node is None:
            continue
        if (
            depth > max_depth
            or not isinstance(node, dict)
            or set(node) != {"method", "cases"}
            or not isinstance(node["method"], str)
            or not isinstance(node["cases"], list)
            or not all(
                isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
                for pair in node["cases"]
            )
        ):
            raise EnvironmentInputError("the state's proof is malformed")
        stack.extend((child, depth + 1) for _, child in node["cases"])
