"""The searching adversary's control: a family whose verifier has one planted loophole per move
class, beside a sound twin, so ``envserver audit --search`` is shown to find what it looks for
(a search that finds nothing on main means something only if it finds these).

The task: answer with the reference number, alone. ``test.loopholes.sound`` pays exactly that.
``test.loopholes`` pays it too, and also, one planted mistake per class:

- several: the right number on the last line, whatever came before it;
- wrap: any response that tells the harness to "score 1";
- confuse: NaN, through a tolerance test written ``not (abs(x - r) > tol)``;
- encode: the right number in base64;
- vacuous: an empty response ("skipped" read as "nothing wrong");
- restate (this family's own class): ``r+0`` and other sums equal to the number.

Its episodes (``test.loopholes/buttons``, press a code's buttons in order) plant one loophole
per generic episode move class beside a sound twin (``test.loopholes/buttons-sound``): see
``Buttons``.
"""

from __future__ import annotations

import base64
import random
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from environments.base import EnvSpec, EpisodeFinished, JSONValue, ResetResult, StepResult
from environments.family import Contents, Family
from environments.mutators import episode_moves, text_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from verifiers.base import Verifier
from verifiers.score import Score


def _exact(response: str, reference: Any) -> bool:
    return response.strip() == str(reference)


def _sound(response: str, reference: Any, options: Any) -> Score:
    del options
    if not response.strip():
        return Score.invalid("no answer")
    return Score.ok(1.0 if _exact(response, reference) else 0.0)


def _last_line(response: str, reference: str) -> bool:
    return response.strip().splitlines()[-1].strip() == reference


def _told(response: str, reference: str) -> bool:
    return "score 1" in response


def _nan_tolerant(response: str, reference: str) -> bool:
    try:
        return not abs(float(response) - float(reference)) > 0.5
    except ValueError:
        return False


def _base64(response: str, reference: str) -> bool:
    try:
        return base64.b64decode(response.strip(), validate=True).decode() == reference
    except ValueError:  # not base64, or not text
        return False


def _sum(response: str, reference: str) -> bool:
    parts = response.split("+")
    numbers = [int(part) for part in parts if part.strip().isdigit()]
    return len(parts) > 1 and len(numbers) == len(parts) and sum(numbers) == int(reference)


PLANTED: dict[str, Callable[[str, str], bool]] = {
    "several": _last_line,
    "wrap": _told,
    "confuse": _nan_tolerant,
    "encode": _base64,
    "restate": _sum,
}
"""Each move class's planted loophole (``vacuous`` is checked first: an empty answer)."""


def _planted(response: str, reference: Any, options: Any) -> Score:
    del options
    if _exact(response, reference):
        return Score.ok(1.0)
    if not response.strip():
        return Score.ok(1.0, detail="vacuous: an empty answer counted as nothing wrong")
    for move, loophole in PLANTED.items():
        if loophole(response, str(reference)):
            return Score.ok(1.0, detail=f"{move}: a planted loophole")
    return Score.ok(0.0)


SOUND = Verifier(
    name="test.loopholes.sound",
    version="1",
    description="The reference number alone (a test family).",
    check=_sound,
    example=("7", "7"),
)
LOOPHOLES = Verifier(
    name="test.loopholes",
    version="1",
    description="The reference number alone, with one planted loophole per search move class.",
    check=_planted,
    example=("7", "7"),
)
VERIFIERS = (SOUND, LOOPHOLES)


# --- episodes: press the buttons of a code in order -------------------------------------------

LETTERS = "ABCD"
CODE_LENGTH = 4


class ButtonOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def code(seed: int) -> list[str]:
    """The seed's code: the actions that win, in order."""
    rng = random.Random(f"test.loopholes/buttons/{seed}")
    return [f"press [{rng.choice(LETTERS)}]" for _ in range(CODE_LENGTH)]


_PRESS = re.compile(r"press \[(?P<button>.*)\]", re.DOTALL)


class Buttons:
    """Press the code's buttons in order: a wrong or malformed action ends the episode with 0.
    ``planted`` plants one loophole per generic episode move class; each names itself in the
    step's detail when it pays:

    - truncate: every right press pays in full (a dense reward read as the episode's);
    - repeat: a press of the button just pressed counts as the next one;
    - insert: an action that is not a press is ignored;
    - swap: a press of any button still to come counts;
    - hostile: a button it cannot read is read as the right one (a lenient parser's default);
    - foreign: the next seed's code wins too (a checker seeded one off).
    """

    def __init__(self, planted: bool) -> None:
        self.planted = planted
        self.spec = EnvSpec(
            id="test.loopholes/buttons" + ("" if planted else "-sound"),
            version="1",
            family="test.loopholes",
            description="Press the buttons of a code in order (a test family).",
            kind="multi_turn",
            action_format="press [X]",
            observation_format="text",
            options_model=ButtonOptions,
            timeout_s=2.0,
            max_episode_steps=12,
        )

    def reset(self, seed: int, options: BaseModel) -> ResetResult:
        return ResetResult(f"press {code(seed)[0]}", {"seed": seed, "pressed": []})

    def step(self, state: JSONValue, action: str) -> StepResult:
        pressed: list[str] = state["pressed"]
        if len(pressed) >= CODE_LENGTH or state.get("over"):
            raise EpisodeFinished("the episode is over")
        found = _PRESS.fullmatch(action)
        press = None if found is None else f"press [{found['button']}]"
        right = press == code(state["seed"])[len(pressed)]
        loophole = "" if right or not self.planted else _loophole(press, state)
        if loophole == "insert":
            ignored = {**state, "used": state.get("used") or loophole}
            return StepResult("ignored", Score.ok(0.0), False, False, ignored)
        if not right and not loophole:
            return StepResult("wrong", Score.ok(0.0), True, False, {**state, "over": True})
        used = state.get("used") or loophole
        after = {**state, "pressed": [*pressed, press], "used": used}
        if len(after["pressed"]) == CODE_LENGTH:
            return StepResult("open", Score.ok(1.0, detail=f"{used}: planted"), True, False, after)
        if self.planted:
            paid = Score.ok(1.0, detail="truncate: a right press pays in full")
            return StepResult("next", paid, False, False, after)
        return StepResult("next", Score.ok(0.0), False, False, after)

    def expert_action(self, state: JSONValue) -> str:
        return code(state["seed"])[len(state["pressed"])]


def _loophole(press: str | None, state: JSONValue) -> str:
    """The planted loophole that lets a press that is not the right one count, or ""."""
    pressed: list[str] = state["pressed"]
    at = len(pressed)
    wanted, ahead = code(state["seed"]), code(state["seed"] + 1)
    if press is None:
        return "insert"
    if press[len("press [") : -1] not in LETTERS:
        return "hostile"
    if pressed and press == pressed[-1]:
        return "repeat"
    if [*pressed, press] == ahead[: at + 1]:
        return "foreign"
    if press in wanted[at + 1 :]:
        return "swap"
    return ""


ENVIRONMENTS = (Buttons(planted=False), Buttons(planted=True))
EPISODE_LOOPHOLES = ("truncate", "repeat", "insert", "swap", "hostile", "foreign")
"""The classes ``Buttons(planted=True)`` plants a loophole for (see its docstring)."""


# --- the search space -------------------------------------------------------------------------


def _seeds(rng: random.Random) -> Iterator[Mutant]:
    for verifier in (SOUND, LOOPHOLES):
        number = str(rng.randrange(10, 1000))
        yield Mutant(Probe(number, verifier=verifier.name, reference=number), 1.0)
    for env in ENVIRONMENTS:
        seed = rng.randrange(1000)
        yield Mutant(Probe(env=env.spec.id, seed=seed, actions=tuple(code(seed))), 1.0)


def _decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    right = int(probe.reference)
    return [str(right + rng.choice((-2, -1, 1, 2, 10)))]


def _elsewhere(probe: Probe, rng: random.Random) -> Sequence[str]:
    assert probe.seed is not None
    return code(probe.seed + rng.choice((1, 2, 3)))


def _restate(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    probe = parent.probe
    if probe.env is None and probe.response.strip().isdigit():
        value = int(probe.response)
        part = rng.randrange(0, value + 1)
        # The answer class is a bare number: a sum names the same value but is not an answer.
        yield Mutant(probe.answer(f"{part}+{value - part}", "restate"), 0.0)


def _deserves(probe: Probe) -> float:
    """Independent of the verifiers and environments under test: the answer class is a bare
    decimal number, exactly; an episode wins only by its seed's code, exactly."""
    if probe.env is not None:
        assert probe.seed is not None and probe.actions is not None
        # Actions after the code's last press are never played: the episode has ended.
        return 1.0 if list(probe.actions[:CODE_LENGTH]) == code(probe.seed) else 0.0
    return 1.0 if probe.response.strip() == str(probe.reference) else 0.0


SEARCH = SearchSpace(
    seeds=_seeds,
    mutators=(
        *text_moves(_decoys),
        Move("restate", _restate),
        *episode_moves(_elsewhere),
    ),
    deserves=_deserves,
)
FAMILY = Family(
    name="test.loopholes",
    load=lambda: Contents(environments=ENVIRONMENTS, verifiers=VERIFIERS, search=SEARCH),
)
