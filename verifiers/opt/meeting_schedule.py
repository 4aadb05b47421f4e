"""Meeting scheduling: meetings placed as (meeting, room, start) within the working day, each at
most once, with no clash in a room or for an attendee, rooms large enough and every attendee
available throughout; maximise the total number of attendees of the meetings held."""

from __future__ import annotations

import re
from itertools import combinations
from typing import Any

from verifiers.opt.answer import check_distinct, check_ids, literal
from verifiers.opt.base import Infeasible, InvalidAnswer, TaskCheck

# The working day in minutes after midnight (9:00-17:00), as the original generator sets it; the
# instance does not carry it, so the check and the generator share these constants.
DAY_START = 540
DAY_END = 1020
# Tuples written without the outer brackets, "(0, 0, 540), (1, 1, 600)": read as a list of them.
# The classes exclude brackets, so matching is linear in the text.
_BARE_TUPLES = re.compile(r"\([^\[\]()]*\)(?:\s*,\s*\([^\[\]()]*\))*")

Placement = tuple[int, int, int]


def _placement(value: Any) -> Placement:
    """One ``(meeting, room, start)``; ``InvalidAnswer`` for any other shape."""
    if (
        not isinstance(value, (list, tuple))
        or len(value) != 3
        or any(isinstance(item, bool) or not isinstance(item, int) for item in value)
    ):
        raise InvalidAnswer(f"{str(value)[:60]} is not a (meeting, room, start) triple of integers")
    return value[0], value[1], value[2]


def placements(answer: str) -> list[Placement]:
    """The triples of ``[(0, 0, 540), (1, 1, 600)]`` (also lists of lists, the tuples without
    the outer brackets, or a single triple)."""
    bare = _BARE_TUPLES.match(answer)
    if bare and answer[bare.end() :].lstrip()[:1] in ("(", "["):
        # "(0, 0, 540) (1, 1, 600)": reading only the first triple would drop the others.
        raise InvalidAnswer("separate the (meeting, room, start) triples with commas")
    whole = bare is not None and bare.end() == len(answer)
    value = literal(f"[{answer}]" if whole else answer)
    if not isinstance(value, (list, tuple)):
        raise InvalidAnswer("expected a list of (meeting, room, start) triples")
    if len(value) == 3 and all(isinstance(item, int) for item in value):
        value = [value]  # one triple written flat, [0, 0, 540]: it has no other reading
    return [_placement(item) for item in value]


def start_windows(instance: dict[str, Any], meeting: int) -> list[tuple[int, int]]:
    """The ranges ``(earliest, latest)`` of start times at which every attendee of ``meeting``
    is available for its whole duration within the working day (empty when there are none)."""
    info = instance["meetings"][str(meeting)]
    common = [(DAY_START, DAY_END)]
    for attendee in info["attendees"]:
        slots = instance["attendee_availability"][str(attendee)]
        common = [
            (max(start, slot_start), min(end, slot_end))
            for start, end in common
            for slot_start, slot_end in slots
            if max(start, slot_start) < min(end, slot_end)
        ]
    duration: int = info["duration"]
    return sorted((start, end - duration) for start, end in common if end - start >= duration)


def _available(slots: list[list[int]], start: int, end: int) -> bool:
    """Whether one availability slot covers ``[start, end]``."""
    return any(slot_start <= start and end <= slot_end for slot_start, slot_end in slots)


def evaluate(instance: dict[str, Any], answer: str) -> float:
    """Total attendees of the meetings held; raises on unknown ids, a meeting placed twice, a
    start outside the day, an over-full room, an unavailable attendee, or a clash in a room or
    for an attendee."""
    meetings, rooms = instance["meetings"], instance["rooms"]
    schedule = placements(answer)
    if not schedule:
        return 0.0  # holding no meeting breaks no rule: feasible, worth nothing
    check_ids([meeting for meeting, _, _ in schedule], len(meetings), "meeting")
    check_ids([room for _, room, _ in schedule], len(rooms), "room")
    # The original let a meeting be held many times, inflating the total: at most once here.
    check_distinct([meeting for meeting, _, _ in schedule], "meeting")
    for meeting, room, start in schedule:
        info = meetings[str(meeting)]
        end = start + info["duration"]
        if start < DAY_START or end > DAY_END:
            raise Infeasible(
                f"meeting {meeting} runs {start}-{end}, outside the day {DAY_START}-{DAY_END}"
            )
        if len(info["attendees"]) > rooms[str(room)]:
            raise Infeasible(
                f"meeting {meeting} has {len(info['attendees'])} attendees but room {room} "
                f"holds {rooms[str(room)]}"
            )
        for attendee in info["attendees"]:
            if not _available(instance["attendee_availability"][str(attendee)], start, end):
                raise Infeasible(f"attendee {attendee} is not available {start}-{end}")
    for (first, room_a, start_a), (second, room_b, start_b) in combinations(schedule, 2):
        if not (
            start_a < start_b + meetings[str(second)]["duration"]
            and start_b < start_a + meetings[str(first)]["duration"]
        ):
            continue  # back to back or apart: no clash
        if room_a == room_b:
            raise Infeasible(f"meetings {first} and {second} overlap in room {room_a}")
        shared = set(meetings[str(first)]["attendees"]) & set(meetings[str(second)]["attendees"])
        if shared:
            # The original let one person sit in two rooms at once.
            raise Infeasible(
                f"attendee {min(shared)} is in meetings {first} and {second} at overlapping times"
            )
    return float(sum(len(meetings[str(meeting)]["attendees"]) for meeting, _, _ in schedule))


CHECK = TaskCheck("meeting_schedule", "max", evaluate)
