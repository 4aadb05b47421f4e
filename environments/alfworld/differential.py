"""The differential check: the native engine against ALFWorld's own engine on the same games.

For each generated game, several command sequences run on both engines: the expert's plan, a
seeded random walk over the admissible commands, a walk mixed with invalid and misspelt
commands (wrong case, extra spaces, unknown objects, empty), moves between receptacles that
share a location (where ``look`` lists objects "next to it"), cleaning, heating and cooling one
object with an examine after each and slicing with a knife, and a long walk that runs into the
50-step limit without winning. After every step the observation, the admissible
commands, the score, ``won`` and ``done`` must be equal, byte for byte. Any difference is a
bug in the native engine.

The same check runs on game files in ALFWorld's released layout (``check_file``): the native
engine plays what ``problem.py`` reads from the file, ALFWorld's engine the file itself.

Needs the ``alfworld`` extra. ``tests/test_alfworld_differential.py`` runs a bounded sample of
both; the benchmark-sized runs are

    envserver alfworld differential --games 1000 [--workers 2]
    envserver alfworld differential --released     # every game under ALFWORLD_DATA
    python -m benchmarks.alfworld_released          # exported games, with the speed of both
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from environments.alfworld.engine import GrammarVersion, Run, World, commands, intro, step, won
from environments.alfworld.export import as_version, game_file
from environments.alfworld.generator import MAX_STEPS, SPLITS, Game, Split, generate
from environments.alfworld.loader import DataUnavailable, game_path, released_games
from environments.alfworld.planner import expert_plan
from environments.alfworld.problem import GameFile, UnsupportedGame, read_text
from environments.alfworld.scenes import SIZES, Difficulty
from environments.alfworld.tables import TASK_TYPES, TaskType

SEQUENCES = ("expert", "walk", "noisy", "shared", "states", "limit")


@dataclass(frozen=True)
class Frame:
    """What one engine shows after a reset or a step."""

    feedback: str
    admissible: tuple[str, ...]
    score: float
    won: bool
    done: bool


@dataclass
class Report:
    """Counts and the first differences found."""

    games: int = 0
    sequences: int = 0
    steps: int = 0
    mismatches: list[str] = field(default_factory=list)
    native_s: float = 0.0
    real_s: float = 0.0

    def merge(self, other: Report) -> None:
        """Add ``other``'s counts and differences to this report."""
        self.games += other.games
        self.sequences += other.sequences
        self.steps += other.steps
        self.mismatches += other.mismatches
        self.native_s += other.native_s
        self.real_s += other.real_s


def _misspell(rng: random.Random, command: str) -> str:
    choice = rng.randrange(6)
    if choice == 0:
        return command.upper()
    if choice == 1:
        return f"  {command}\t"  # surrounding whitespace is stripped: still valid
    if choice == 2 and len(command) > 3:
        i = rng.randrange(len(command) - 1)
        return command[:i] + command[i + 1] + command[i] + command[i + 2 :]
    if choice == 3:
        return command.replace(" ", "  ", 1)
    if choice == 4:
        return command.rsplit(" ", 1)[0]
    return rng.choice(["", "jump", "go to", "take", "examine", "put", "go to moon 1", "open"])


@dataclass(frozen=True)
class Subject:
    """A game as the check plays it: its name, the native engine's world and starting run, and
    the expert's plan (the generator's, or the native planner's for a game file)."""

    name: str
    world: World
    run: Run
    walkthrough: tuple[str, ...]

    @classmethod
    def generated(cls, game: Game) -> Subject:
        """A generated game."""
        return cls(game.name, game.world, game.run, game.walkthrough)

    @classmethod
    def released(cls, name: str, game: GameFile) -> Subject:
        """A game file read for the native engine (its plan in the wheel's 0.4 phrasing)."""
        return cls(name, game.world, game.run, tuple(expert_plan(game.world, game.run) or ()))


class NativePlayer:
    """The native engine with ALFWorld's episode cap, as the differential check drives it."""

    def __init__(self, game: Subject, grammar: GrammarVersion) -> None:
        self.world: World = game.world
        self.run: Run = game.run
        self.grammar = grammar
        self.done = False
        self.last: Frame | None = None

    def frame(self, feedback: str) -> Frame:
        is_won = won(self.world, self.run)
        self.done = is_won or self.run.steps >= MAX_STEPS
        self.last = Frame(
            feedback,
            tuple(commands(self.world, self.run, self.grammar)),
            1.0 if is_won else 0.0,
            is_won,
            self.done,
        )
        return self.last

    def reset(self) -> Frame:
        return self.frame(intro(self.world, self.run))

    def step(self, command: str) -> Frame:
        if self.done and self.last is not None:
            return self.last  # the batch env's answer after done
        outcome = step(self.world, self.run, command, self.grammar)
        self.run = outcome.run
        return self.frame(outcome.feedback)


def _shared_location(game: Subject) -> list[str] | None:
    """Move an object between two receptacles that share a location, look and take it back:
    the moves that leave ``not_inreceptacle`` facts next to the object's location (the
    "Next to it, you see" of ``look``). None when the game has no such pair."""
    world, run = game.world, game.run
    for receptacles in world.at_location.values():
        for first in receptacles:
            for o, inside in enumerate(run.inside):
                if inside != first or not world.has("pickupable", o):
                    continue
                for second in (r for r in receptacles if r != first and o in world.holds[r]):
                    opens = [f"open {world.rname(r)}" for r in (first, second) if world.openable[r]]
                    thing, there = world.oname(o), world.rname(second)
                    return [
                        f"go to {world.rname(first)}",
                        *opens,
                        f"take {thing} from {world.rname(first)}",
                        f"move {thing} to {there}",
                        "look",
                        f"examine {there}",
                        f"take {thing} from {there}",
                        "look",
                        f"move {thing} to {world.rname(first)}",
                        "look",
                    ]
    return None


def _object_states(game: Subject) -> list[str] | None:
    """Clean, heat and cool one object in turn, examining it after each change, then slice a
    sliceable object with a knife and examine it: the states and texts walks rarely reach.
    Commands the game does not allow are left out (no sink, no knife, ...); None when no object
    can change at all."""
    world, run = game.world, game.run
    chosen: list[str] = []

    def do(command: str) -> bool:
        nonlocal run
        outcome = step(world, run, command, "0.4")
        if outcome.valid and not won(world, outcome.run):
            chosen.append(command)
            run = outcome.run
            return True
        return False

    def reach(r: int) -> None:
        if world.receptacles[r][2] != run.at:
            do(f"go to {world.rname(r)}")
        if world.openable[r] and r not in run.opened:
            do(f"open {world.rname(r)}")

    def fetch(o: int) -> bool:
        r = run.inside[o]
        reach(r)
        return do(f"take {world.oname(o)} from {world.rname(r)}")

    def first(prop: str) -> int | None:
        return next((o for o in range(len(world.objects)) if world.has(prop, o)
                     and world.has("pickupable", o)), None)  # fmt: skip

    def changes(o: int) -> int:  # how many of the three changes apply (plain objects first)
        abilities = ("cleanable", "heatable", "coolable")
        return sum(world.has(a, o) for a in abilities) * 2 - world.has("receptacle_object", o)

    movable = [o for o in range(len(world.objects)) if world.has("pickupable", o)]
    changing = max(movable, key=changes, default=None)
    if changing is None or changes(changing) <= 0 or not fetch(changing):
        return None
    for verb, kind in (("clean", "SinkBasin"), ("heat", "Microwave"), ("cool", "Fridge"),
                       ("heat", "Microwave")):  # fmt: skip
        where = next((r for r, (_, k, _) in enumerate(world.receptacles) if k == kind), None)
        if where is not None:
            reach(where)
            if do(f"{verb} {world.oname(changing)} with {world.rname(where)}"):
                do(f"examine {world.oname(changing)}")
    here = [r for r in world.here(run.at) if changing in world.holds[r]]
    if here:
        do(f"move {world.oname(changing)} to {world.rname(here[0])}")
    knife, food = first("knife"), first("sliceable")
    if run.held is None and knife is not None and food is not None and fetch(knife):
        host = next((r for r, (_, _, loc) in enumerate(world.receptacles) if loc in run.near[food]),
                    None)  # fmt: skip
        if host is not None:
            reach(host)
            if do(f"slice {world.oname(food)} with {world.oname(knife)}"):
                do("look")
                down = [r for r in world.here(run.at) if knife in world.holds[r]]
                if down and do(f"move {world.oname(knife)} to {world.rname(down[0])}"):
                    fetch(food)
                    do(f"examine {world.oname(food)}")
    return chosen


def _wins(player: NativePlayer, command: str) -> bool:
    return won(player.world, step(player.world, player.run, command, player.grammar).run)


def sequences(
    game: Subject,
    grammar: GrammarVersion,
    seed: int,
    *,
    names: tuple[str, ...] = SEQUENCES,
    longest: int = 30,
) -> Iterator[tuple[str, list[str]]]:
    """The named command sequences for one game (walks are chosen on the native engine, which
    is checked step by step against the real one, so both see the same commands); random
    walks take 8 to ``longest`` steps, the ``limit`` walk runs past the 50-step cap."""
    if "expert" in names:
        yield "expert", [as_version(c, grammar) for c in game.walkthrough]
    for name, build in (("shared", _shared_location), ("states", _object_states)):
        planned = build(game) if name in names else None
        if planned is not None:
            yield name, [as_version(c, grammar) for c in planned]
    for name in (n for n in names if n not in ("expert", "shared", "states")):
        rng = random.Random(f"differential/{seed}/{name}")
        player = NativePlayer(game, grammar)
        frame = player.reset()
        chosen: list[str] = []
        length = MAX_STEPS + 3 if name == "limit" else rng.randint(8, longest)
        for _ in range(length):
            options = list(frame.admissible)
            if name == "limit":  # never win, so the walk runs into the cap
                options = [c for c in options if not _wins(player, c)] or options
            command = rng.choice(options)
            if name in ("noisy", "limit") and rng.random() < 0.3:
                command = _misspell(rng, command)
            chosen.append(command)
            frame = player.step(command)
        yield name, chosen


def check_game(
    game: Game | Subject,
    grammar: GrammarVersion,
    engine: object,
    seed: int,
    *,
    names: tuple[str, ...] = SEQUENCES,
    longest: int = 30,
    path: str | None = None,
) -> Report:
    """Play the named sequences on both engines; differences go into the report. ALFWorld's
    engine loads the game file at ``path`` (a game file's ``Subject``), or the generated game's
    file written in ``grammar``."""
    from environments.alfworld.textworld_engine import Observation, RealEngine  # noqa: PLC0415

    assert isinstance(engine, RealEngine)
    report = Report(games=1)
    if isinstance(game, Game):
        path = engine.game_path(game_file(game, grammar))
        game = Subject.generated(game)
    assert path is not None, "a game file's subject is checked on its file"

    def real_frame(observation: Observation) -> Frame:
        return Frame(
            observation.feedback,
            tuple(observation.admissible_commands),
            observation.score,
            observation.won,
            observation.done,
        )

    for name, chosen in sequences(game, grammar, seed, names=names, longest=longest):
        report.sequences += 1
        native = NativePlayer(game, grammar)
        started = time.perf_counter()
        real = real_frame(engine.reset(path))
        report.real_s += time.perf_counter() - started
        mine = native.reset()
        label = f"{game.name} [{grammar}] {name}"
        if real != mine:
            report.mismatches.append(_describe(label, "reset", real, mine))
            continue
        for index, command in enumerate(chosen):
            started = time.perf_counter()
            real = real_frame(engine.step(command))
            report.real_s += time.perf_counter() - started
            started = time.perf_counter()
            mine = native.step(command)
            report.native_s += time.perf_counter() - started
            report.steps += 1
            if real != mine:
                report.mismatches.append(
                    _describe(label, f"step {index + 1} {command!r}", real, mine)
                )
                break
    return report


def _describe(label: str, where: str, real: Frame, mine: Frame) -> str:
    lines = [f"{label} at {where}:"]
    for part in ("feedback", "admissible", "score", "won", "done"):
        a, b = getattr(real, part), getattr(mine, part)
        if a != b:
            if part == "admissible":
                lines.append(f"  admissible only real: {sorted(set(a) - set(b))}")
                lines.append(f"  admissible only native: {sorted(set(b) - set(a))}")
            else:
                lines.append(f"  {part} real:   {a!r}\n  {part} native: {b!r}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Case:
    """One game of the sample and the sequences it plays."""

    seed: int
    task_type: TaskType
    split: Split
    difficulty: Difficulty
    grammar: GrammarVersion
    names: tuple[str, ...]


def cases(count: int, first_seed: int = 0) -> list[Case]:
    """``count`` games spread over task types, splits, both grammars and sizes (half easy,
    a third medium, the rest hard: ALFWorld's engine costs grow with the scene); every tenth
    game also walks into the step limit."""
    found = []
    for i in range(count):
        tenth = i % 20
        difficulty: Difficulty = "easy" if tenth < 10 else "medium" if tenth < 17 else "hard"
        names = SEQUENCES if i % 10 == 0 else SEQUENCES[:5]
        found.append(
            Case(
                seed=first_seed + i,
                task_type=TASK_TYPES[i % len(TASK_TYPES)],
                split=SPLITS[(i // len(TASK_TYPES)) % len(SPLITS)],
                difficulty=difficulty,
                grammar="0.3" if i % 4 == 3 else "0.4",
                names=names,
            )
        )
    return found


def check_case(case: Case) -> Report:
    """Check one game with this process's real engine."""
    from environments.alfworld.textworld_engine import engine  # noqa: PLC0415

    game = generate(case.seed, case.task_type, case.split, case.difficulty)
    return check_game(game, case.grammar, engine(), case.seed, names=case.names, longest=20)


def check_file(path: Path, seed: int, names: tuple[str, ...] = SEQUENCES) -> Report:
    """Check one game file in the released layout (its ``traj_data.json`` beside it): the native
    engine plays what ``problem.py`` reads from it, ALFWorld's engine the file itself. A file
    the native engine does not model is a mismatch that says why."""
    from environments.alfworld.textworld_engine import engine  # noqa: PLC0415

    name = f"{path.parent.parent.name}/{path.parent.name}"
    try:
        game = read_text(path.read_text(), (path.parent / "traj_data.json").read_text())
    except UnsupportedGame as exc:
        return Report(games=1, sequences=1, mismatches=[f"{name}: not read: {exc}"])
    subject = Subject.released(name, game)
    return check_game(subject, game.grammar, engine(), seed, names=names, longest=20,
                      path=str(path))  # fmt: skip


def run(games: int, first_seed: int = 0, workers: int = 2) -> int:
    """Run the differential check on ``games`` generated games, print the agreement count; the
    exit status: 0 when every sequence agreed."""
    with ProcessPoolExecutor(workers) as pool:
        parts = pool.map(check_case, cases(games, first_seed))
        return _tally(parts, f"sizes {', '.join(SIZES)}; grammars 0.4 and 0.3")


def released_files() -> list[Path]:
    """Every playable game file under ``ALFWORLD_DATA`` (all splits), as ALFWorld lists them."""
    paths = []
    for split in SPLITS:
        with suppress(DataUnavailable):
            paths += [game_path(split, game.relative) for game in released_games(split)]
    return paths


def run_files(paths: list[Path], workers: int = 2) -> int:
    """The check on game files in the released layout (``check_file``), like ``run``."""
    with ProcessPoolExecutor(workers) as pool:
        parts = pool.map(check_file, paths, range(len(paths)))
        return _tally(parts, "game files in the released layout")


def _tally(parts: Iterator[Report], what: str) -> int:
    report = Report()
    started = time.perf_counter()
    for done, part in enumerate(parts, 1):
        report.merge(part)
        for mismatch in part.mismatches:
            print(mismatch, file=sys.stderr, flush=True)
        if done % 25 == 0:
            print(f"{done} games, {report.sequences} sequences, {report.steps} steps, "
                  f"{len(report.mismatches)} mismatches, "
                  f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
    agreeing = report.sequences - len(report.mismatches)
    print(
        f"differential: {report.games} games, {report.sequences} sequences, {report.steps} steps "
        f"({what}); agreement {agreeing}/{report.sequences} sequences; "
        f"{len(report.mismatches)} mismatches; {time.perf_counter() - started:.0f} s"
    )
    return 0 if not report.mismatches else 1
