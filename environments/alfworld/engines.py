"""The two engines behind the ``alfworld`` environment, as adapters of one protocol.

``NativeEngine`` plays on the pure-Python engine (``engine.py``): a generated game travels whole
in the state; a released game is read from ``ALFWORLD_DATA`` (``problem.py``) by each worker
once and named in the state. ``TextWorldEngine`` plays on ALFWorld's own engine
(``textworld_engine.py``, the ``alfworld`` extra); its state is the game's source and the
commands so far, replayed on a worker whose engine stands elsewhere. Both answer a reset or a
step with a ``Moment``; the environment (``family.py``) turns moments into rewards and info.

What the server lacks (the extra, the data) is ``EnvironmentUnavailable`` (503, with the fix);
what the caller asked wrongly is ``EnvironmentInputError`` (400).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Generic, Protocol, TypeVar

from environments.alfworld.engine import (
    NOTHING_HAPPENS,
    GrammarVersion,
    MalformedGame,
    Run,
    World,
    commands,
    intro,
    step,
    won,
    world_from_text,
)
from environments.alfworld.export import game_file
from environments.alfworld.generator import Game, Split, generate
from environments.alfworld.loader import (
    DATA_ENV,
    RELEASE,
    DataUnavailable,
    ReleasedGame,
    game_path,
    native_game,
    released_games,
)
from environments.alfworld.options import AlfWorldOptions
from environments.alfworld.planner import expert_plan
from environments.alfworld.problem import GameFile, UnsupportedGame
from environments.alfworld.rewards import stage
from environments.alfworld.scenes import Difficulty
from environments.alfworld.state import (
    Episode,
    GeneratedSource,
    NativeEpisode,
    ReleasedSource,
    Source,
    TextWorldEpisode,
)
from environments.alfworld.tables import TaskType
from environments.alfworld.textworld_engine import Observation, engine
from environments.base import (
    EnvironmentInputError,
    EnvironmentUnavailable,
    EpisodeFinished,
    JSONValue,
)
from verifiers.base import Unavailable

TASK_LINE = re.compile(r"Your task is to: (.*)\.$", re.MULTILINE)
ENDED = "this episode has ended: reset to start another"
DATA_FIX = (
    f"set {DATA_ENV} to the folder alfworld-download fills ({RELEASE}/train, valid_seen, "
    "valid_unseen with game.tw-pddl and traj_data.json per game)"
)
EXTRA_FIX = (
    "pip install 'envserver[alfworld]' (alfworld, textworld and fast-downward-textworld; "
    "the last builds with g++, cmake and make)"
)

E = TypeVar("E", bound=Episode)


@dataclass(frozen=True)
class Moment:
    """What an engine shows after a reset or a step: the text, the admissible commands, the
    goal, the steps taken, the task; whether the command was admissible; the expert's plan from
    here when it was asked for; process-reward components only this engine computes."""

    observation: str
    admissible: list[str]
    won: bool
    steps: int
    task_type: str
    task: str
    valid: bool = True
    plan: list[str] | None = None
    components: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Opening(Generic[E]):
    """A reset: the episode, what it shows, and info only a reset gives (the game's name)."""

    episode: E
    moment: Moment
    info: dict[str, JSONValue]


class Engine(Protocol[E]):
    """One engine: starts episodes, advances them by one command, plans from them."""

    def start(self, seed: int, options: AlfWorldOptions) -> Opening[E]:
        """The episode ``(seed, options)`` names, at its start."""
        ...

    def advance(self, episode: E, action: str) -> tuple[E, Moment]:
        """One command; raises ``EpisodeFinished`` once the game is won or truncated."""
        ...

    def expert(self, episode: E) -> list[str]:
        """The expert's plan from the episode's state ([] when there is none)."""
        ...


@lru_cache(maxsize=64)
def generated(seed: int, task_type: TaskType | None, split: Split, difficulty: Difficulty) -> Game:
    """The generated game, cached per worker (a game is regenerated for every textworld step)."""
    return generate(seed, task_type, split, difficulty)


def _unavailable(exc: DataUnavailable) -> EnvironmentUnavailable:
    return EnvironmentUnavailable(Unavailable(str(exc), DATA_FIX))


def _released(seed: int, options: AlfWorldOptions) -> ReleasedGame:
    """The released game the seed (or ``game_index``) picks in the split."""
    try:
        listed = released_games(options.split, options.task_type)
    except DataUnavailable as exc:  # the server's data, not the caller's input
        raise _unavailable(exc) from None
    index = seed % len(listed) if options.game_index is None else options.game_index
    if index >= len(listed):
        raise EnvironmentInputError(
            f"game_index {index} is out of range: split {options.split!r} has {len(listed)} games"
        )
    return listed[index]


# --- the native engine ---------------------------------------------------------------------------


class NativeEngine:
    """The pure-Python engine: microseconds a step, the whole state in the token."""

    def start(self, seed: int, options: AlfWorldOptions) -> Opening[NativeEpisode]:
        if options.games == "released":
            chosen = _released(seed, options)
            game, digest = self._read(options.split, chosen.relative)
            world, run, grammar = game.world, game.run, game.grammar
            where: str | ReleasedSource = ReleasedSource(
                games="released", split=options.split, relative=chosen.relative, digest=digest
            )
            info: dict[str, JSONValue] = {"game": chosen.relative}
            if won(world, run):
                raise EnvironmentInputError(f"released game {chosen.relative!r} starts won")
        else:
            made = generated(seed, options.task_type, options.split, options.difficulty)
            world, run, grammar = made.world, made.run, options.grammar
            where = world.text()
            info = {"game": made.name, "floorplan": made.scene.floorplan}
        plan = expert_plan(world, run, grammar) or []
        episode = NativeEpisode(
            engine="native",
            game=str(info["game"]),
            world=where,
            run=run.to_json(),
            grammar=grammar,
            limit=options.step_limit,
            reward=options.reward,
            plan=options.expert_plan,
            distance=len(plan),
            start_distance=len(plan),
            start_stage=stage(world, run),
        )
        shown = _moment(world, run, grammar, intro(world, run), plan=plan)
        return Opening(episode, shown, info)

    def advance(self, episode: NativeEpisode, action: str) -> tuple[NativeEpisode, Moment]:
        world, run = self._state(episode)
        if won(world, run) or run.steps >= episode.limit:
            raise EpisodeFinished(ENDED)
        outcome = step(world, run, action, episode.grammar)
        after = outcome.run
        reached = stage(world, after)
        process = {
            "subgoals": reached,
            "subgoal": (reached - stage(world, run)) / (1 - episode.start_stage),
        }
        plan = (expert_plan(world, after, episode.grammar) or []) if episode.wants_plan else None
        shown = _moment(
            world, after, episode.grammar, outcome.feedback, valid=outcome.valid, plan=plan
        )
        return episode.model_copy(update={"run": after.to_json()}), replace(
            shown, components=process
        )

    def expert(self, episode: NativeEpisode) -> list[str]:
        world, run = self._state(episode)
        return expert_plan(world, run, episode.grammar) or []

    def _state(self, episode: NativeEpisode) -> tuple[World, Run]:
        try:
            if isinstance(episode.world, str):
                world = world_from_text(episode.world)
            else:
                world = self._released_world(episode.world)
            return world, Run.from_json(episode.run, world)
        except MalformedGame as exc:
            raise EnvironmentInputError(f"malformed alfworld state: {exc}") from None

    def _released_world(self, source: ReleasedSource) -> World:
        game, digest = self._read(source.split, source.relative)
        if digest != source.digest:
            raise EnvironmentInputError(
                f"released game {source.relative!r} changed on this server since the episode's "
                "reset: reset to start another"
            )
        return game.world

    @staticmethod
    def _read(split: Split, relative: str) -> tuple[GameFile, str]:
        try:
            return native_game(split, relative)
        except DataUnavailable as exc:
            raise _unavailable(exc) from None
        except UnsupportedGame as exc:
            raise EnvironmentInputError(
                f"released game {relative!r} does not play on the native engine ({exc}); "
                "engine 'textworld' plays it"
            ) from None


def _moment(
    world: World,
    run: Run,
    grammar: GrammarVersion,
    text: str,
    *,
    valid: bool = True,
    plan: list[str] | None = None,
) -> Moment:
    return Moment(
        observation=text,
        admissible=commands(world, run, grammar),
        won=won(world, run),
        steps=run.steps,
        task_type=world.task_type,
        task=world.task,
        valid=valid,
        plan=plan,
    )


# --- ALFWorld's engine ---------------------------------------------------------------------------


class TextWorldEngine:
    """ALFWorld's own engine: the reference, tens of milliseconds a step."""

    def start(self, seed: int, options: AlfWorldOptions) -> Opening[TextWorldEpisode]:
        source: Source
        if options.games == "released":
            chosen = _released(seed, options)
            source = ReleasedSource(games="released", split=options.split, relative=chosen.relative)
            name, task_type = chosen.relative, chosen.task_type
        else:
            made = generated(seed, options.task_type, options.split, options.difficulty)
            source = GeneratedSource(
                games="generated",
                seed=seed,
                task_type=options.task_type,
                split=options.split,
                difficulty=options.difficulty,
                grammar=options.grammar,
            )
            name, task_type = made.name, made.goal.task_type
        observation = _play(source, [], options.wants_plan)
        plan = observation.policy_commands or []
        found = TASK_LINE.search(observation.feedback)
        episode = TextWorldEpisode(
            engine="textworld",
            game=name,
            source=source,
            task_type=task_type,
            task=found.group(1) if found else "",
            commands=[],
            limit=options.step_limit,
            reward=options.reward,
            plan=options.expert_plan,
            distance=len(plan),
            start_distance=len(plan),
        )
        return Opening(episode, _seen(episode, observation, 0, plan), {"game": name})

    def advance(self, episode: TextWorldEpisode, action: str) -> tuple[TextWorldEpisode, Moment]:
        if episode.won or len(episode.commands) >= episode.limit:
            raise EpisodeFinished(ENDED)
        history = [*episode.commands, action]
        observation = _play(episode.source, history, episode.wants_plan)
        after = episode.model_copy(update={"commands": history, "won": observation.won})
        plan = (observation.policy_commands or []) if episode.wants_plan else None
        return after, _seen(episode, observation, len(history), plan)

    def expert(self, episode: TextWorldEpisode) -> list[str]:
        return _play(episode.source, episode.commands, True).policy_commands or []


def _seen(
    episode: TextWorldEpisode, observation: Observation, steps: int, plan: list[str] | None
) -> Moment:
    return Moment(
        observation=observation.feedback,
        admissible=observation.admissible_commands,
        won=observation.won,
        steps=steps,
        task_type=episode.task_type,
        task=episode.task,
        valid=observation.feedback != NOTHING_HAPPENS,
        plan=plan,
    )


def _play(source: Source, history: list[str], plan: bool) -> Observation:
    """ALFWorld's engine's observation after ``history`` on the game ``source`` names."""
    try:
        real = engine()
    except ModuleNotFoundError as exc:
        why = f"engine 'textworld' needs ALFWorld's engine ({exc.name} is missing)"
        raise EnvironmentUnavailable(Unavailable(why, EXTRA_FIX)) from None
    if isinstance(source, ReleasedSource):
        try:
            path = str(game_path(source.split, source.relative))
        except DataUnavailable as exc:
            raise _unavailable(exc) from None
    else:
        made = generated(source.seed, source.task_type, source.split, source.difficulty)
        path = real.game_path(game_file(made, source.grammar))
    real.policy = plan
    return real.play(path, history)


ENGINES: dict[str, Engine[Any]] = {
    "native": NativeEngine(),
    "textworld": TextWorldEngine(),
}
