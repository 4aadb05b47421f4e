r"""What an OPT answer deserves, recomputed without ``verifiers.opt``: the searching adversary's
judge (``environments.opt.search``, issue 38).

The verifier under test reads the answer, checks feasibility and values it; this module does all
three again from the family's documented contract (the README's answer grammar, each task's
rules, the reward options), in code of its own, so that a mistake in one is a disagreement the
search reports rather than a mistake both make. The only thing it shares with the service is
the exact optimum of the instance (proved by the family's solver), which is what "deserves"
is measured against.

Reading, as documented: only the text after the last ``Answer:`` is the answer; decoration
around it is peeled (the emphasis that closes a bold ``**Answer:**``, white space, a trailing
full stop, an enclosing pair of ``**``, ``*``, backticks or ``$``, ``\boxed{}`` or ``\text{}``,
eight layers at most); what remains must be one value of the grammar, integers in ASCII digits
without sign or leading zero. An earlier ``Answer:`` whose first line is (or starts with a
bracketed) value, or the word ``Impossible``, offers a second answer: unless it is the final one,
the response names none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations, pairwise
from typing import Any

Value = int | list["Value"]
"""A value of the grammar; tuples are read as lists, which no task tells apart."""

_MARKER = re.compile(r"answer\s*:", re.IGNORECASE)
_BOLD_CLOSE = re.compile(r"\A[*_]+")
_ENCLOSING = ("**", "*", "`", "$")
_COMMANDS = ("\\boxed{", "\\text{")
_LAYERS = 8
_LONGEST = 20_000  # characters after the last marker that the service reads at all
_NUMBER = re.compile(r"0|[1-9][0-9]{0,17}")
_BLANK = " \t\r\n"  # the only white space allowed inside a value
_OPEN = {"[": "]", "(": ")"}
_NESTING = 3
_DAY = (540, 1020)


class Unreadable(ValueError):
    """The text is no value of the grammar, or not this task's shape: it deserves nothing."""


def _unwrapped(text: str) -> str:
    for _ in range(_LAYERS):
        text = text.strip()
        if text.endswith("."):
            text = text[:-1].strip()
        inner = next(
            (
                text[len(pair) : -len(pair)]
                for pair in _ENCLOSING
                if len(text) > 2 * len(pair) and text.startswith(pair) and text.endswith(pair)
            ),
            None,
        )
        if inner is None:
            inner = next(
                (text[len(c) : -1] for c in _COMMANDS if text.startswith(c) and text.endswith("}")),
                None,
            )
        if inner is None:
            break
        text = inner
    return text


class _Tokens:
    """A value read token by token: integers, brackets, commas, blanks between them."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def blank(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in _BLANK:
            self.at += 1

    def value(self, depth: int) -> Value:
        self.blank()
        number = _NUMBER.match(self.text, self.at)
        if number:
            end = number.end()
            if end < len(self.text) and self.text[end].isdigit():
                raise Unreadable("a leading zero or more than 18 digits")
            self.at = end
            return int(number.group())
        closer = _OPEN.get(self.text[self.at : self.at + 1])
        if closer is None or depth == _NESTING:
            raise Unreadable("not a value")
        self.at += 1
        items: list[Value] = []
        self.blank()
        while self.text[self.at : self.at + 1] != closer:
            items.append(self.value(depth + 1))
            self.blank()
            if self.text[self.at : self.at + 1] == ",":
                self.at += 1
                self.blank()
            elif self.text[self.at : self.at + 1] != closer:
                raise Unreadable("items must be separated by commas")
        self.at += 1
        return items


def whole(text: str) -> Value:
    """The one value that is all of ``text`` (blanks around it allowed)."""
    tokens = _Tokens(text)
    value = tokens.value(0)
    tokens.blank()
    if tokens.at != len(text):
        raise Unreadable("text after the value")
    return value


def _numbers(value: Value) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(item, int) for item in value):
        raise Unreadable("not a flat list of integers")
    return [item for item in value if isinstance(item, int)]


def flat(text: str) -> list[int]:
    """A flat list: bracketed, bare (``0, 1``) or a path (``0 -> 1``, in brackets or not)."""
    if "->" in text:
        body = text.strip()
        if body[:1] in _OPEN and body[-1:] == _OPEN[body[0]]:
            body = body[1:-1]
        steps = [step.strip(_BLANK) for step in body.split("->")]
        if not all(_NUMBER.fullmatch(step) for step in steps):
            raise Unreadable("a path of non-integers")
        return [int(step) for step in steps]
    bracketed = text.lstrip()[:1] in _OPEN
    return _numbers(whole(text if bracketed else f"[{text}]"))


def halves(text: str) -> tuple[list[int], list[int]]:
    bare = re.fullmatch(r"\[[^\[\]()]*\](\s*,\s*\[[^\[\]()]*\])+", text)
    value = whole(f"[{text}]" if bare else text)
    if not isinstance(value, list) or len(value) != 2:
        raise Unreadable("not two parts")
    return _numbers(value[0]), _numbers(value[1])


def triples(text: str) -> list[tuple[int, int, int]]:
    bare = re.match(r"\([^\[\]()]*\)(\s*,\s*\([^\[\]()]*\))*", text)
    if bare and text[bare.end() :].lstrip()[:1] in _OPEN:
        raise Unreadable("triples without commas between them")
    value = whole(f"[{text}]" if bare and bare.end() == len(text) else text)
    if not isinstance(value, list):
        raise Unreadable("not a list of triples")
    if len(value) == 3 and all(isinstance(item, int) for item in value):
        value = [value]
    found = []
    for item in value:
        numbers = _numbers(item)
        if len(numbers) != 3:
            raise Unreadable("not a triple")
        found.append((numbers[0], numbers[1], numbers[2]))
    return found


def _offered(segment: str) -> str | None:
    """What an earlier ``Answer:`` offers: its first line when that is a value (in any
    spelling: bracketed, bare, a path), or the bracketed value the line starts with; None when
    it offers no answer (prose)."""
    line = _unwrapped(_BOLD_CLOSE.sub("", segment).lstrip().split("\n", 1)[0])
    if not line:
        return None
    if re.fullmatch(r"[\[({\"']*\s*impossible\s*[\])}\"']*", line, re.IGNORECASE):
        return line  # set cover's one word answer (wrong on every generated instance)
    for reading in (flat, whole, lambda text: whole(f"[{text}]")):
        try:
            reading(line)
            return line
        except Unreadable:
            pass
    if line[:1] not in _OPEN:
        return None
    tokens = _Tokens(line)
    try:
        tokens.value(0)
    except Unreadable:
        return None
    return line[: tokens.at]


def _squashed(text: str) -> str:
    return re.sub(r"\s", "", text)


def answer_text(response: str) -> str:
    """The final answer's text, peeled; ``Unreadable`` when there is none, it is too long, or
    an earlier ``Answer:`` offers another."""
    marks = list(_MARKER.finditer(response))
    if not marks:
        raise Unreadable("no Answer:")
    rest = response[marks[-1].end() :]
    if len(rest) > _LONGEST:
        raise Unreadable("too long")
    final = _unwrapped(_BOLD_CLOSE.sub("", rest))
    if not final:
        raise Unreadable("empty")
    for here, there in pairwise(marks):
        offered = _offered(response[here.end() : there.start()])
        if offered is not None and _squashed(offered) != _squashed(final):
            raise Unreadable("several answers")
    return final


# --- each task's rules, from its description ------------------------------------------------


class Infeasible(ValueError):
    """A readable answer that breaks the task's rules."""


def _distinct_in(ids: Sequence[int], count: int) -> None:
    if not ids or any(i >= count for i in ids):
        raise Unreadable("no id, or an id that does not exist")
    if len(set(ids)) != len(ids):
        raise Infeasible("an id repeats")


def _adjacent(graph: Mapping[str, Any], a: int, b: int) -> bool:
    return str(b) in {str(n) for n in graph[str(a)]}


def _knapsack(instance: Mapping[str, Any], text: str) -> float:
    items = instance["items"]
    chosen = flat(text)
    _distinct_in(chosen, len(items))
    if sum(items[str(i)]["weight"] for i in chosen) > instance["capacity"]:
        raise Infeasible("over capacity")
    return float(sum(items[str(i)]["value"] for i in chosen))


def _subset_sum(instance: Mapping[str, Any], text: str) -> float:
    chosen = flat(text)
    _distinct_in(chosen, len(instance["numbers"]))
    if sum(instance["numbers"][str(i)] for i in chosen) != instance["target"]:
        raise Infeasible("misses the target")
    return float(len(chosen))


def _set_cover(instance: Mapping[str, Any], text: str) -> float:
    chosen = flat(text)
    _distinct_in(chosen, len(instance["S"]))
    covered = {element for i in chosen for element in instance["S"][str(i)]}
    if not set(instance["U"]) <= covered:
        raise Infeasible("uncovered elements")
    return float(len(chosen))


def _tsp(instance: Mapping[str, Any], text: str) -> float:
    tour, count = flat(text), len(instance)
    if not tour or any(city >= count for city in tour):
        raise Unreadable("no city, or one that does not exist")
    if len(tour) != count + 1 or tour[0] != tour[-1] or set(tour) != set(range(count)):
        raise Infeasible("not a tour of every city once")
    return float(sum(instance[str(a)][str(b)] for a, b in pairwise(tour)))


def _hamiltonian(instance: Mapping[str, Any], text: str) -> float:
    path = flat(text)
    if not path or any(node >= len(instance) for node in path):
        raise Unreadable("no node, or one that does not exist")
    simple = len(set(path[:-1])) == len(path) - 1 >= 3 and path[0] == path[-1]
    steps = all(_adjacent(instance, a, b) and _adjacent(instance, b, a) for a, b in pairwise(path))
    if not (simple and steps):
        raise Infeasible("not a simple cycle along edges")
    return float(len(path))


def _clique(instance: Mapping[str, Any], text: str) -> float:
    chosen = flat(text)
    _distinct_in(chosen, len(instance))
    if not all(_adjacent(instance, a, b) and _adjacent(instance, b, a) for a, b in
               combinations(chosen, 2)):  # fmt: skip
        raise Infeasible("two members are not adjacent")
    return float(len(chosen))


def _independent(instance: Mapping[str, Any], text: str) -> float:
    chosen = flat(text)
    _distinct_in(chosen, len(instance))
    if any(_adjacent(instance, a, b) or _adjacent(instance, b, a) for a, b in
           combinations(chosen, 2)):  # fmt: skip
        raise Infeasible("two members are adjacent")
    return float(len(chosen))


def _coloring(instance: Mapping[str, Any], text: str) -> float:
    colours = flat(text)
    if len(colours) != len(instance) or 0 in colours:
        raise Unreadable("not one positive colour per vertex")
    for vertex, near in instance.items():
        if any(colours[int(vertex)] == colours[int(other)] for other in near):
            raise Infeasible("an edge with one colour")
    return float(len(set(colours)))


def _bisection(instance: Mapping[str, Any], text: str) -> float:
    first, second = halves(text)
    nodes, count = first + second, len(instance)
    if any(node >= count for node in nodes):
        raise Unreadable("a node that does not exist")
    if sorted(nodes) != list(range(count)) or abs(len(first) - len(second)) > count % 2:
        raise Infeasible("not a balanced partition of every node")
    side = set(first)
    edges: dict[tuple[int, int], float] = {}
    for node, near in instance.items():
        for other, weight in near.items():
            edges.setdefault((min(int(node), int(other)), max(int(node), int(other))), weight)
    return float(sum(w for (a, b), w in edges.items() if (a in side) != (b in side)))


def _meetings(instance: Mapping[str, Any], text: str) -> float:
    meetings, rooms = instance["meetings"], instance["rooms"]
    schedule = triples(text)
    if any(m >= len(meetings) or r >= len(rooms) for m, r, _ in schedule):
        raise Unreadable("a meeting or room that does not exist")
    if len({m for m, _, _ in schedule}) != len(schedule):
        raise Infeasible("a meeting held twice")
    spans = []
    for meeting, room, start in schedule:
        info = meetings[str(meeting)]
        end = start + info["duration"]
        people = set(info["attendees"])
        if start < _DAY[0] or end > _DAY[1] or len(people) > rooms[str(room)]:
            raise Infeasible("outside the day or over capacity")
        for person in people:
            slots = instance["attendee_availability"][str(person)]
            if not any(a <= start and end <= b for a, b in slots):
                raise Infeasible("an attendee is unavailable")
        spans.append((start, end, room, people))
    for (s1, e1, r1, p1), (s2, e2, r2, p2) in combinations(spans, 2):
        if s1 < e2 and s2 < e1 and (r1 == r2 or p1 & p2):
            raise Infeasible("a room or an attendee in two meetings at once")
    return float(sum(len(p) for _, _, _, p in spans))


RULES: dict[str, tuple[str, Callable[[Mapping[str, Any], str], float]]] = {
    "knapsack": ("max", _knapsack),
    "subset_sum": ("max", _subset_sum),
    "set_cover": ("min", _set_cover),
    "tsp": ("min", _tsp),
    "hamiltonian_cycle": ("max", _hamiltonian),
    "max_clique": ("max", _clique),
    "max_independent_set": ("max", _independent),
    "graph_coloring": ("min", _coloring),
    "min_bisection": ("min", _bisection),
    "meeting_schedule": ("max", _meetings),
}
"""Each task's direction and rules: the objective of a feasible answer, else an exception."""


def objective(task: str, instance: Mapping[str, Any], response: str) -> float | None:
    """The objective of ``response``'s answer, or None when it is unreadable or infeasible."""
    try:
        return RULES[task][1](instance, answer_text(response))
    except (Unreadable, Infeasible):
        return None


def deserved(
    task: str,
    instance: Mapping[str, Any],
    best: float,
    response: str,
    options: Mapping[str, Any],
) -> float:
    """The reward ``response`` deserves against the optimum ``best``, under the reward
    options (``mode``, ``power``, ``threshold``, as the family documents them)."""
    value = objective(task, instance, response)
    if value is None:
        return 0.0
    if options.get("mode", "quality") == "binary":
        return 1.0
    top, bottom = (value, best) if RULES[task][0] == "max" else (best, value)
    ratio = 1.0 if bottom == 0 else min(top / bottom, 1.0)  # 0/0, or the optimum beaten
    if ratio < float(options.get("threshold", 0.0)):
        return 0.0
    return float(ratio ** float(options.get("power", 1.0)))
