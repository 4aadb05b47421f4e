"""OPT-BENCH meeting scheduling (meeting-schedule): generator, exact solver, greedy, check."""

from __future__ import annotations

from typing import Any

import pytest

from environments.opt.references import ON_DEMAND_BUDGET
from environments.opt.task import LEVELS, Instance, Level
from environments.opt.tasks.meeting_schedule import TASK
from tests import opt_support as opt
from tests.opt_support import assert_infeasible, assert_invalid, score
from verifiers.score import Score

SEEDS = range(60)
# (meetings, attendees, rooms, most attendees per meeting) per level, as the original draws them.
SIZES: dict[Level, tuple[tuple[int, int], tuple[int, int], tuple[int, int], int]] = {
    "easy": ((4, 5), (3, 5), (3, 4), 3),
    "medium": ((5, 6), (4, 6), (4, 5), 4),
    "hard": ((6, 7), (5, 7), (5, 6), 4),
    "bench": ((8, 10), (7, 9), (6, 7), 5),
}
# The original's quirk: every attendee is free all day but lunch.
DAY_LESS_LUNCH = [[540, 720], [780, 1020]]


def _score(instance: Instance, answer: str, value: float = 7.0) -> Score:
    """The verifier's score of ``answer`` against ``value`` (OFFICE's optimum by default)."""
    return score(TASK.name, instance, answer, value)


# Three meetings, two rooms. Meetings 0 and 1 share attendee 1; room 1 is too small for
# meeting 2. Optimum 7: all three meetings (2 + 2 + 3 attendees).
OFFICE: dict[str, Any] = {
    "meetings": {
        "0": {"attendees": [0, 1], "duration": 60},
        "1": {"attendees": [1, 2], "duration": 30},
        "2": {"attendees": [0, 2, 3], "duration": 90},
    },
    "attendee_availability": {str(a): DAY_LESS_LUNCH for a in range(4)},
    "rooms": {"0": 3, "1": 2},
}

# --- generation ------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_sizes_and_the_originals_availability(level: Level) -> None:
    (m_lo, m_hi), (a_lo, a_hi), (r_lo, r_hi), most = SIZES[level]
    for seed in SEEDS:
        instance = opt.instance(TASK.name, seed, level)
        assert list(instance) == ["meetings", "attendee_availability", "rooms"]
        meetings, people = instance["meetings"], instance["attendee_availability"]
        assert m_lo <= len(meetings) <= m_hi
        assert a_lo <= len(people) <= a_hi
        assert r_lo <= len(instance["rooms"]) <= r_hi
        assert list(meetings) == [str(m) for m in range(len(meetings))]
        for info in meetings.values():
            attendees = info["attendees"]
            assert 2 <= len(attendees) <= most and attendees == sorted(set(attendees))
            assert all(0 <= a < len(people) for a in attendees)
            assert info["duration"] in (30, 60, 90)
        assert all(3 <= capacity <= 10 for capacity in instance["rooms"].values())
        # Reproduced on purpose: the original's availability is the same for everyone.
        assert all(slots == DAY_LESS_LUNCH for slots in people.values())


# --- exact references ------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_the_optimum_never_exceeds_every_meeting_held(level: Level) -> None:
    # Proven, feasible and valued right: tests/test_opt_tasks.py, on the same seeds.
    for seed, instance, solution in opt.solved(TASK.name, level):
        total = sum(len(info["attendees"]) for info in instance["meetings"].values())
        assert solution.value <= total, (level, seed)


def test_a_hand_made_optimum_is_found() -> None:
    solution = TASK.solve(OFFICE, ON_DEMAND_BUDGET)
    assert (solution.value, solution.optimal) == (7.0, True)
    # Room 0 is the only one that holds meeting 2; with lunch blocking 720-780 the day still fits.
    tight = {**OFFICE, "rooms": {"0": 2, "1": 2}}
    assert TASK.solve(tight, ON_DEMAND_BUDGET).value == 4.0  # meeting 2 fits no room


def test_one_person_cannot_attend_both_of_two_long_meetings_squeezed_by_availability() -> None:
    # Attendee 0 is free only 540-630: two 60-minute meetings with them cannot both be held, even
    # in different rooms (the original's validator allowed exactly that).
    squeezed = {
        "meetings": {
            "0": {"attendees": [0, 1], "duration": 60},
            "1": {"attendees": [0, 2, 3], "duration": 60},
        },
        "attendee_availability": {"0": [[540, 630]], **{str(a): [[540, 1020]] for a in (1, 2, 3)}},
        "rooms": {"0": 5, "1": 5},
    }
    assert TASK.solve(squeezed, ON_DEMAND_BUDGET).value == 3.0
    result = _score(squeezed, "[(0, 0, 540), (1, 1, 570)]", 3.0)
    assert_infeasible(result, "attendee 0 is in meetings 0 and 1")


def test_nothing_schedulable_means_the_empty_schedule_is_optimal() -> None:
    cramped = {**OFFICE, "rooms": {"0": 1}}
    solution = TASK.solve(cramped, ON_DEMAND_BUDGET)
    assert (solution.answer, solution.value, solution.optimal) == ("[]", 0.0, True)
    assert _score(cramped, "[]", 0.0).reward == 1.0


def test_the_empty_schedule_is_feasible_and_worth_nothing() -> None:
    # The rules ask for meetings "each at most once": holding none breaks none of them.
    for answer in ("[]", "[ ]", "[]."):
        result = _score(OFFICE, answer)
        assert (result.status, result.reward) == ("ok", 0.0), result
        assert (result.components["feasible"], result.metrics["objective"]) == (1.0, 0.0)


# --- the check -------------------------------------------------------------------------------


def test_a_valid_schedule_is_valued_by_its_attendees() -> None:
    answer = "[(0, 1, 540), (1, 0, 600), (2, 0, 630)]"
    result = _score(OFFICE, answer)
    assert (result.status, result.reward, result.metrics["objective"]) == ("ok", 1.0, 7.0)
    assert _score(OFFICE, "[[0, 1, 540], [1, 0, 600], [2, 0, 630]]").reward == 1.0
    assert _score(OFFICE, "(0, 1, 540), (1, 0, 600), (2, 0, 630)").reward == 1.0
    assert _score(OFFICE, "(2, 0, 540)").metrics["objective"] == 3.0  # one triple alone
    # Back to back in a room and for attendee 1 (0 ends at 600 when 1 starts), and ending right
    # at the lunch break, are allowed.
    assert _score(OFFICE, "[(0, 0, 540), (1, 0, 600), (2, 1, 930)]").status == "ok"
    assert _score(OFFICE, "[(2, 0, 630)]").metrics["objective"] == 3.0


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        # The original's loopholes: the same meeting held twice, one person in two rooms at once.
        ("[(2, 0, 540), (2, 0, 800)]", "meeting 2 appears more than once"),
        ("[(0, 0, 540), (0, 1, 540)]", "meeting 0 appears more than once"),
        ("[(0, 1, 540), (1, 0, 570)]", "attendee 1 is in meetings 0 and 1 at overlapping times"),
        # Others.
        ("[(0, 0, 540), (2, 0, 570)]", "meetings 0 and 2 overlap in room 0"),
        ("[(2, 1, 540)]", "meeting 2 has 3 attendees but room 1 holds 2"),
        ("[(0, 0, 690)]", "attendee 0 is not available 690-750"),  # runs into lunch
        ("[(0, 0, 480)]", "outside the day 540-1020"),
        ("[(1, 0, 1000)]", "outside the day 540-1020"),
    ],
)
def test_broken_schedules_are_infeasible(answer: str, reason: str) -> None:
    assert_infeasible(_score(OFFICE, answer), reason)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("[(3, 0, 540)]", "meeting 3 does not exist"),
        ("[(0, 2, 540)]", "room 2 does not exist"),
        ("[(-1, 0, 540)]", "cannot read"),
        ("[(0, 0, -60)]", "cannot read"),
        ("[(0, 0)]", "not a (meeting, room, start) triple"),
        ("[(0, 0, 540, 600)]", "not a (meeting, room, start) triple"),
        ("[(0, 0, 540.0)]", "cannot read"),
        ("[(0, 0, '9:00')]", "cannot read"),
        ("[(True, 0, 540)]", "cannot read"),
        ("[0, 1, 2, 3]", "not a (meeting, room, start) triple"),
        ("{0: (0, 540)}", "cannot read"),
        # Exactly the grammar: nothing after the schedule, no separators or signs in numbers.
        ("[(0, 1, 5_40)]", "cannot read"),
        ("[(0, 1, 540)] then lunch", "unexpected text after the answer"),
        ("(0, 1, 540), (1, 0, 600) then lunch", "unexpected text after the answer"),
        ("<[(0, 1, 540)]>", "cannot read"),
        ("[(-0, 1, 540)]", "cannot read"),
        ("meeting 0 in room 0 at nine", "cannot read"),
        ("(0, 1, 540) (1, 0, 600)", "separate the (meeting, room, start) triples with commas"),
    ],
)
def test_unreadable_schedules_are_invalid(answer: str, reason: str) -> None:
    assert_invalid(_score(OFFICE, answer), reason)


@pytest.mark.parametrize(
    "answer",
    [
        # Schedule-shaped malformations (the generic ones: tests/test_opt_tasks.py).
        "[" + ", ".join(["(0, 0, 540)"] * 100_000) + "]",
        "[(0, 0, " + "9" * 5000 + ")]",
        "(0, 0, 540) " * 1500,
    ],
)
def test_malformed_schedules_are_invalid_and_never_raise(answer: str) -> None:
    assert_invalid(_score(OFFICE, answer))
