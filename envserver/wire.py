"""Wire schemas (pydantic v2): the JSON bodies of the v1 HTTP API.

Light on purpose: clients import this module, so it depends on pydantic alone (and on
``verifiers.numbers``, which is pydantic alone too).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from verifiers.numbers import StrictNumbers

MAX_SEED = 2**63 - 1  # equal to environments.task_id.MAX_SEED; kept here so clients stay light
MAX_ACTION_CHARS = 1_000_000
MAX_TOKEN_CHARS = 8_000_000
MAX_JSON_DEPTH = 100
"""How deeply lists and objects may nest in any request body (422 beyond)."""

Status = Literal["ok", "invalid", "timeout", "error"]
ItemStatus = Literal["ok", "timeout", "error"]
MAX_RUN_CHARS = 128
RUN_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]*$"
RunLabel = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_RUN_CHARS,
        pattern=RUN_PATTERN,
        description="A run's label, chosen by the client (letters, digits, and _ . : - after "
        "the first): the server keeps the outcomes of its task ids under it when it keeps "
        "statistics (ENVSERVER_STATS), and ignores it otherwise.",
    ),
]
SCORER = (
    "Who scored this: the verifier's name@version, or the environment's id@version where it "
    "scores its own steps."
)
DIGEST = (
    "A digest of the source and data of the scorer's family (its modules and the project "
    "modules they import, its data files): it changes whenever what scores could."
)


def _not_text(value: Any) -> Any:
    # The text "42" would convert; a seed in a JSON body is a number (options, which task ids
    # carry as text, do convert).
    if isinstance(value, str | bytes):
        raise PydanticCustomError("int_type", "a seed is an integer, not text")
    return value


Seed = Annotated[int, Field(ge=0, le=MAX_SEED), BeforeValidator(_not_text)]
"""A task seed: an integer from 0 to ``MAX_SEED``, never its text."""


class WireModel(StrictNumbers):
    """A request body: unknown fields are refused, so a typo is an error rather than ignored;
    numbers are numbers (no booleans for integers, no NaN or infinities)."""

    model_config = ConfigDict(extra="forbid")


class WireReply(BaseModel):
    """A response body: unknown fields are ignored, so an older client reads a newer server."""

    model_config = ConfigDict(extra="ignore")


class ChatMessage(WireReply):
    """One chat message of an observation."""

    role: str
    content: str


Observation = str | list[ChatMessage]


# --- catalogue -------------------------------------------------------------------------------


class EnvInfo(WireReply):
    """One environment of the catalogue."""

    id: str
    version: str
    family: str
    description: str
    kind: Literal["single_turn", "multi_turn"]
    action_format: str
    observation_format: Literal["text", "chat"]
    options_schema: dict[str, Any]
    verifier: str | None = None
    timeout_s: float
    max_episode_steps: int | None = None


class VerifierInfo(WireReply):
    """One verifier of the catalogue."""

    name: str
    version: str
    family: str = Field("", description="The family that declares the verifier.")
    description: str
    options_schema: dict[str, Any]
    timeout_s: float
    components: list[str] = Field(
        default_factory=list,
        description="Every component a score of this verifier may carry (a score carries a "
        "subset: none when the response was unreadable).",
    )


class DisabledFamily(WireReply):
    """A family, environment or verifier this server cannot serve: why, and what enables it."""

    name: str = Field(
        description="A family, an environment id (with `?option=value` when only that option "
        "cannot be served here) or a verifier name."
    )
    reason: str
    fix: str = Field("", description="The extra to install, variable to set or binary to add.")


class Catalogue(WireReply):
    """``GET /v1/envs``."""

    envs: list[EnvInfo]
    verifiers: list[VerifierInfo]
    disabled: list[DisabledFamily] = Field(default_factory=list)


# --- episodes --------------------------------------------------------------------------------


class ResetRequest(WireModel):
    """Start an episode by ``seed`` and ``options``, or by ``task_id``; neither: a random seed."""

    seed: Seed | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    task_id: str | None = Field(None, max_length=1024)
    run: RunLabel | None = Field(
        None,
        description="Count this episode's end for its task in this run's statistics (when the "
        "server keeps them); the state token carries it, so steps need not repeat it.",
    )

    @model_validator(mode="after")
    def _one_way(self) -> ResetRequest:
        if self.task_id is not None and (self.seed is not None or self.options):
            raise ValueError("give either task_id or seed/options, not both")
        return self


class ResetResponse(WireReply):
    """The first observation and the state token for the next step."""

    status: ItemStatus = "ok"
    detail: str = ""
    observation: Observation | None = None
    state: str | None = None
    task_id: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)


class StepRequest(WireModel):
    """Apply ``action`` to the episode the ``state`` token carries."""

    state: str = Field(max_length=MAX_TOKEN_CHARS)
    action: str = Field(max_length=MAX_ACTION_CHARS)


class StepResponse(WireReply):
    """One transition. ``status`` is how the step was scored: on ``timeout``/``error`` the reward
    is null (mask it) and ``state`` is the unchanged input token, so the step can be retried."""

    status: Status = "ok"
    detail: str = ""
    observation: Observation | None = None
    reward: float | None = None
    components: dict[str, float] = Field(default_factory=dict)
    terminated: bool = False
    truncated: bool = False
    state: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    scorer: str = Field("", description=SCORER)
    digest: str = Field("", description=DIGEST)


class BatchResetRequest(WireModel):
    """Many resets in one call (vector envs)."""

    items: list[ResetRequest] = Field(min_length=1)


class BatchResetResponse(WireReply):
    """Results in request order."""

    results: list[ResetResponse]


class BatchStepRequest(WireModel):
    """Many steps in one call (vector envs, tree-search expansions)."""

    items: list[StepRequest] = Field(min_length=1)


class BatchStepResponse(WireReply):
    """Results in request order."""

    results: list[StepResponse]


MAX_EXPAND_ACTIONS = 256


class ExpandRequest(WireModel):
    """Expand the goal in ``state``: apply each of ``actions`` (default: every valid action)
    independently, for tree search."""

    state: str = Field(max_length=MAX_TOKEN_CHARS)
    actions: list[str] | None = Field(None, min_length=1, max_length=MAX_EXPAND_ACTIONS)


class BranchReply(WireReply):
    """One sub-goal an action leads to; all branches of an action must be solved.
    ``terminated`` with a ``reward``: reaching this branch alone ends the episode."""

    name: str
    observation: Observation
    state: str
    terminated: bool
    reward: float | None = None
    info: dict[str, Any] = Field(default_factory=dict)


class ExpansionReply(WireReply):
    """One action's result: its branches (none: the action closes the goal), or why it could
    not be applied (``status`` other than ok)."""

    action: str
    status: Status = "ok"
    detail: str = ""
    branches: list[BranchReply] = Field(default_factory=list)


class ExpandResponse(WireReply):
    """One expansion per requested action, in order."""

    status: ItemStatus = "ok"
    detail: str = ""
    expansions: list[ExpansionReply] = Field(default_factory=list)
    scorer: str = Field("", description=SCORER)
    digest: str = Field("", description=DIGEST)


# --- verification ----------------------------------------------------------------------------


class VerifyItem(WireModel):
    """One response to score, against a ``reference`` (with a verifier) or a ``task_id``."""

    response: str = Field(max_length=MAX_ACTION_CHARS)
    task_id: str | None = Field(None, max_length=1024)
    reference: Any = None
    options: dict[str, Any] | None = None
    id: str | None = Field(None, max_length=256, description="Echoed back for correlation.")

    @model_validator(mode="after")
    def _one_target(self) -> VerifyItem:
        if (self.task_id is None) == (self.reference is None):
            raise ValueError("give exactly one of task_id or reference")
        if self.task_id is not None and self.options is not None:
            raise ValueError("options belong in the task id when scoring by task_id")
        return self


class VerifyRequest(WireModel):
    """Score a batch. Items with a ``reference`` need ``verifier``; items with a ``task_id`` name
    their environment in it, so the reference never travels."""

    verifier: str | None = None
    options: dict[str, Any] = Field(default_factory=dict, description="Defaults for every item.")
    timeout_s: float | None = Field(None, gt=0, description="Per-item limit (capped by server).")
    items: list[VerifyItem] = Field(min_length=1)
    run: RunLabel | None = None


class VerifyResult(WireReply):
    """The Score of one item, in request order."""

    id: str | None = None
    reward: float | None
    status: Status
    components: dict[str, float] = Field(default_factory=dict)
    detail: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)
    latency_ms: float = 0.0
    scorer: str = Field("", description=SCORER)
    digest: str = Field("", description=DIGEST)


class VerifyResponse(WireReply):
    """``POST /v1/verify``."""

    results: list[VerifyResult]


# --- curriculum ------------------------------------------------------------------------------

MAX_CURRICULUM_TASKS = 4096
"""The most task ids one curriculum sample draws."""
MAX_CURRICULUM_POOL = 50_000
"""The most task ids a curriculum sample may be restricted to (a dataset's)."""


class CurriculumRequest(WireModel):
    """Draw ``n`` task ids of ``env`` for ``run`` by their measured pass rates (see
    ``envserver.curriculum``): tasks whose pass rate is near ``target``, unseen tasks at the rate
    ``explore``, and unseen tasks wherever too few seen ones are near the target."""

    env: str = Field(max_length=1024, description="A single-turn environment.")
    run: RunLabel
    n: int = Field(ge=1, le=MAX_CURRICULUM_TASKS, description="How many task ids to draw.")
    target: float = Field(0.5, gt=0.0, lt=1.0, description="The pass rate to centre on.")
    width: float = Field(
        0.2,
        ge=0.02,
        le=1.0,
        description="The Gaussian weight's standard deviation around target, in pass rate.",
    )
    explore: float = Field(
        0.1, ge=0.0, le=1.0, description="The share of draws given to unseen tasks."
    )
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Options of the tasks: the run's tasks with these options are the pool, and "
        "unseen tasks are new seeds with them.",
    )
    tasks: list[str] | None = Field(
        None,
        min_length=1,
        max_length=MAX_CURRICULUM_POOL,
        description="Draw only from these task ids of env (a dataset's), instead of the run's "
        "tasks and new seeds.",
    )
    seed: int | None = Field(
        None, ge=0, le=MAX_SEED, description="Seed of the draw, to repeat it (default: random)."
    )

    @model_validator(mode="after")
    def _one_pool(self) -> CurriculumRequest:
        if self.tasks is not None and self.options:
            raise ValueError("give options or tasks, not both: task ids carry their options")
        return self


class TaskEstimate(WireReply):
    """What a run's outcomes say of one task's pass rate: the Beta(1 + successes, 1 + failures)
    posterior's mean and standard deviation."""

    task_id: str
    attempts: int
    successes: float
    mean: float
    sd: float


class DrawnTask(WireReply):
    """One drawn task: its id, whether the run never attempted it, and its estimate."""

    task_id: str
    fresh: bool
    attempts: int
    mean: float


class CurriculumSample(WireReply):
    """``POST /v1/curriculum/sample``: the drawn task ids in order, and where they came from."""

    env: str
    run: str
    tasks: list[DrawnTask]
    seen: int = Field(description="Tasks of the pool the run has attempted.")
    in_band: int = Field(
        description="Seen tasks whose drawn pass rate fell within about one width of target "
        "(the candidates for the draws that were not exploration)."
    )
    fresh: int = Field(description="Drawn tasks the run never attempted.")


class HistogramBin(WireReply):
    """Tasks whose estimated pass rate lies in [low, high) (the last bin includes 1)."""

    low: float
    high: float
    tasks: int


class CurriculumReport(WireReply):
    """``GET /v1/curriculum/{run}``: the run's per-task estimates (most attempted first, up to
    the request's limit) and a histogram of all of them."""

    run: str
    env: str | None
    total: int = Field(description="Tasks the run has attempted (the histogram counts all).")
    attempts: int = Field(description="Outcomes recorded for the run, in all.")
    tasks: list[TaskEstimate]
    histogram: list[HistogramBin]


# --- operations ------------------------------------------------------------------------------


class Health(WireReply):
    """``/healthz`` and ``/readyz``."""

    status: Literal["ok", "unavailable"]
    version: str
    detail: str = ""
    pool_workers: int | None = None
    pool_ready: int | None = Field(
        None, description="Pool workers started and taking items now (of pool_workers)."
    )
    degraded: bool = Field(
        False,
        description="Serving with less than the configured capacity while lost workers (or "
        "the pool's fork server) are replaced; detail says what. Heals by itself: no restart.",
    )
    in_flight: int | None = None
    coalesced: int | None = Field(
        None,
        description="/healthz: pool items this process sent to a worker behind another in one "
        "write since it started (coalescing under saturation: ENVSERVER_COALESCE_ITEM_MS).",
    )
    envs: int | None = Field(
        None,
        description="Environments served now: in /readyz as many as GET /v1/envs lists; in "
        "/healthz those the process loaded (it reads no family's store).",
    )
    disabled: list[DisabledFamily] = Field(default_factory=list)
    sandbox: str | None = Field(
        None,
        description="The sandbox's isolation level: full, container, weak, none (configured) "
        "or unavailable (did not start).",
    )
    sandbox_workers: int | None = Field(None, description="Sandbox workers alive now.")
    process: int | None = Field(
        None,
        description="The id of the server process that answered (one of ENVSERVER_SERVER_"
        "PROCESSES; any of them serves any call).",
    )
    server_processes: int | None = Field(
        None, description="/readyz: server processes sharing the port (this one among them)."
    )
    pool_workers_total: int | None = Field(
        None, description="/readyz: pool workers of every server process together."
    )
    sizing: str | None = Field(
        None,
        description="/readyz: the cores and memory the server sized itself for, and the sizes "
        "(server processes and pool workers left unset are chosen from them).",
    )
