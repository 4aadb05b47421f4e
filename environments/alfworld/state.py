"""An ``alfworld`` episode's state, typed: what the client carries between steps, validated once
when a step reads it.

The field names are those the states of tokens already issued hold, so those keep decoding.
``world`` is the whole game for a generated one (the client carries it, sealed), or where the
server reads a released one (the split, the game's folder and the digest of its file: a file
changed since the reset is refused, not played on).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from environments.alfworld.engine import GrammarVersion
from environments.alfworld.generator import Split
from environments.alfworld.rewards import RewardMode, needs_plan
from environments.alfworld.scenes import Difficulty
from environments.alfworld.tables import TaskType
from environments.base import EnvironmentInputError, JSONValue


class _Value(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GeneratedSource(_Value):
    """A generated game, by the arguments that regenerate it."""

    games: Literal["generated"]
    seed: int
    task_type: TaskType | None
    split: Split
    difficulty: Difficulty
    grammar: GrammarVersion = "0.4"


class ReleasedSource(_Value):
    """A released game under ``ALFWORLD_DATA``: its split, its folder in the split, and (native
    engine) the digest of its ``game.tw-pddl``."""

    games: Literal["released"]
    split: Split
    relative: str
    digest: str | None = None


Source = Annotated[GeneratedSource | ReleasedSource, Field(discriminator="games")]


class Episode(_Value):
    """What every episode carries: its game's name, the step limit, the reward option, whether
    the expert's plan is shown, and the expert's distance (now and at reset)."""

    game: str
    limit: int = Field(ge=1)
    reward: RewardMode
    plan: bool
    distance: int = Field(ge=0)
    start_distance: int = Field(ge=0)

    @property
    def wants_plan(self) -> bool:
        """Whether every step needs the expert's plan (shown, or the progress reward's)."""
        return needs_plan(self.plan, self.reward)


class NativeEpisode(Episode):
    """The native engine's episode: the world (or where to read it), the run, the grammar, and
    the sub-goals reached at reset."""

    engine: Literal["native"]
    world: str | ReleasedSource
    run: dict[str, Any]
    grammar: GrammarVersion
    start_stage: float = Field(ge=0, lt=1)


class TextWorldEpisode(Episode):
    """ALFWorld's engine's episode: the game's source, the task, and the commands so far (the
    engine's state cannot be copied, so a worker replays them when it stands elsewhere)."""

    engine: Literal["textworld"]
    source: Source
    task_type: TaskType
    task: str
    commands: list[str]
    won: bool = False


AnyEpisode = NativeEpisode | TextWorldEpisode
_EPISODE: TypeAdapter[AnyEpisode] = TypeAdapter(
    Annotated[AnyEpisode, Field(discriminator="engine")]
)


def read(state: JSONValue) -> AnyEpisode:
    """The episode a client's state holds; raises EnvironmentInputError for anything else."""
    try:
        return _EPISODE.validate_python(state)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "state"
        raise EnvironmentInputError(f"malformed alfworld state: {where}: {first['msg']}") from None


def dump(episode: AnyEpisode) -> JSONValue:
    """The JSON state a client carries."""
    return episode.model_dump(mode="json")
