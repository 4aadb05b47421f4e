"""ALFWorld's own engine: TextWorld's ``PddlEnv`` (Fast Downward underneath) wrapped as
``AlfredTWEnv.init_env`` wraps it (``Limit`` at 50 steps, ``AlfredDemangler``, ``AlfredInfos``,
``Filter``), with the step semantics of its batch env (after ``done`` every command returns the
last result again).

Needs the ``alfworld`` extra. The engine is slow (tens of milliseconds a step, a second to load
a game) and holds state no one can copy, so a worker process keeps ONE engine: ``play`` loads
the game and replays the commands, continuing from where it stands when the game and the
command prefix match (the next step of the same episode). The engine is not thread-safe;
``RealEngine`` refuses calls from a thread other than its creator's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_EPISODE_STEPS = 50
KEPT_FILES = 16


@dataclass(frozen=True)
class Observation:
    """What the real engine says after a reset or a step."""

    feedback: str
    admissible_commands: list[str]
    score: float
    won: bool
    done: bool
    policy_commands: list[str] | None = None


class RealEngine:
    """One TextWorld/ALFWorld engine, for one thread of one process."""

    def __init__(self, max_episode_steps: int = MAX_EPISODE_STEPS) -> None:
        import textworld  # noqa: PLC0415 - the optional extra, imported where it is needed
        from alfworld.agents.environment.alfred_tw_env import (  # noqa: PLC0415
            AlfredDemangler,
            AlfredInfos,
        )
        from textworld.envs.wrappers import Filter, GenericEnvironment, Limit  # noqa: PLC0415

        self._owner = threading.get_ident()
        self.max_episode_steps = max_episode_steps
        # AlfredTWEnv's request (won, admissible commands, the game file); the planner's
        # commands only while ``policy`` is on (it replans on every step).
        self._infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
        infos = self._infos
        # textworld.gym's _make_env, with AlfredTWEnv's wrappers.
        env: Any = Limit(GenericEnvironment(infos), max_episode_steps=max_episode_steps)
        for wrapper in (AlfredDemangler(shuffle=False), AlfredInfos, Filter):
            env = wrapper(env)
        self._env = env
        self._folder = Path(tempfile.mkdtemp(prefix="alfworld-games-"))
        weakref.finalize(self, shutil.rmtree, self._folder, ignore_errors=True)
        self._loaded: str | None = None
        self._history: list[str] = []
        self._last: Observation | None = None

    @property
    def policy(self) -> bool:
        """Whether observations carry the planner's commands (``policy_commands``)."""
        return bool(self._infos.policy_commands)

    @policy.setter
    def policy(self, value: bool) -> None:
        self._infos.policy_commands = value

    def _check_thread(self) -> None:
        if threading.get_ident() != self._owner:
            raise RuntimeError("a RealEngine is bound to the thread that created it")

    def game_path(self, document: dict[str, Any]) -> str:
        """A file holding ``document`` (named by its digest, in this engine's folder, which
        keeps the last ``KEPT_FILES`` games and is removed with the engine)."""
        text = json.dumps(document, sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()[:24]
        path = self._folder / f"{digest}.tw-pddl"
        if not path.exists():
            older = sorted(self._folder.glob("*.tw-pddl"), key=lambda p: p.stat().st_mtime)
            for stale in older[: max(0, len(older) - KEPT_FILES + 1)]:
                if str(stale) != self._loaded:
                    stale.unlink()
            path.write_text(text)
        return str(path)

    def _observe(self, obs: str, infos: dict[str, Any], score: float, done: bool) -> Observation:
        return Observation(
            feedback=obs,
            admissible_commands=list(infos["admissible_commands"]),
            score=float(score),
            won=bool(infos["won"]),
            done=bool(done),
            policy_commands=infos.get("policy_commands") if self.policy else None,
        )

    def reset(self, path: str) -> Observation:
        """Load the game at ``path`` (if another is loaded) and start it."""
        self._check_thread()
        if self._loaded != path:
            self._env.load(path)
            self._loaded = path
        obs, infos = self._env.reset()
        self._history = []
        self._last = self._observe(obs, infos, 0.0, False)
        return self._last

    def step(self, command: str) -> Observation:
        """One command; after ``done`` the last result again, as the batch env answers."""
        self._check_thread()
        if self._last is None:
            raise RuntimeError("reset the engine before stepping it")
        self._history.append(command)
        if self._last.done:
            return self._last
        obs, score, done, infos = self._env.step(command)
        self._last = self._observe(obs, infos, score, done)
        return self._last

    def play(self, path: str, commands: list[str]) -> Observation:
        """The observation after ``commands`` from the start of the game at ``path``: continues
        the current episode when it is a prefix, replays from a reset otherwise."""
        self._check_thread()
        if (
            self._loaded != path
            or self._history != commands[: len(self._history)]
            or self._last is None
        ):
            self.reset(path)
        last = self._last
        assert last is not None
        for command in commands[len(self._history) :]:
            last = self.step(command)
        return last

    def close(self) -> None:
        """Release the engine."""
        self._env.close()


_ENGINES: dict[tuple[int, int], RealEngine] = {}
_LOCK = threading.Lock()


def engine() -> RealEngine:
    """This process's engine for the calling thread (created on first use)."""
    key = (os.getpid(), threading.get_ident())
    with _LOCK:
        found = _ENGINES.get(key)
        if found is None:
            found = _ENGINES[key] = RealEngine()
        return found
