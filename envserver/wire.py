"""Wire schemas (pydantic v2): the JSON bodies of the v1 HTTP API.

Light on purpose: clients import this module, so it depends on pydantic alone (and on
``verifiers.numbers``, which is pydantic alone too).
"""

from __future__ import annotations

from enum import StrEnum
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
COMPONENTS = (
    "The parts the reward is made of, by name (the scorer's catalogue entry lists them): what "
    "a trainer may shape or log as parts of the reward."
)
METRICS = (
    "Diagnostics recorded beside the reward (tests run, the index of the first failure, "
    "whether the reference is a tautology): never part of it (the scorer's catalogue entry "
    "lists them)."
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


# --- problems --------------------------------------------------------------------------------


class ProblemKind(StrEnum):
    """Every kind of error the server answers with: the last segment of a problem document's
    ``type`` URI, also its ``kind`` member. Stable across servers: clients branch on it.

    The request: ``bad-request`` (malformed framing, or a 400 a family's route raises),
    ``malformed-json``, ``unsupported-media-type``, ``body-too-large``, ``too-deep``,
    ``non-finite-number``, ``validation-error`` (the schema), ``invalid-options``,
    ``batch-too-large``, ``malformed-frame`` (a stream frame). Tasks and episodes:
    ``malformed-task-id``, ``unknown-task`` (another version), ``foreign-task``, ``no-task-ids``,
    ``not-single-turn``, ``not-expandable``, ``bad-input`` (the environment refuses the action or
    state's content), ``episode-finished``. State tokens: ``no-state-token``,
    ``malformed-token``, ``invalid-token-signature``, ``foreign-token``, ``stale-token``. Keys:
    ``unauthorized``, ``forbidden``. What a request names: ``unknown-environment``,
    ``unknown-verifier``, ``unknown-route`` (a stream frame's path), ``not-found`` (no such route,
    or an id a family's route does not know), ``method-not-allowed``, ``conflict``, ``gone``,
    ``environment-gone`` (retired). The sandbox routes: ``sandbox-input``,
    ``sandbox-unavailable``. Capacity: ``overloaded`` (429: retry after ``Retry-After``),
    ``unavailable`` (503: retry), ``environment-unavailable`` (503: not served here, see
    ``reason`` and ``fix``; retrying cannot help), ``request-timeout`` (504). A bug:
    ``internal``.
    """

    BAD_REQUEST = "bad-request"
    MALFORMED_JSON = "malformed-json"
    UNSUPPORTED_MEDIA_TYPE = "unsupported-media-type"
    BODY_TOO_LARGE = "body-too-large"
    TOO_DEEP = "too-deep"
    NON_FINITE_NUMBER = "non-finite-number"
    VALIDATION_ERROR = "validation-error"
    INVALID_OPTIONS = "invalid-options"
    BATCH_TOO_LARGE = "batch-too-large"
    MALFORMED_FRAME = "malformed-frame"
    MALFORMED_TASK_ID = "malformed-task-id"
    UNKNOWN_TASK = "unknown-task"
    FOREIGN_TASK = "foreign-task"
    NO_TASK_IDS = "no-task-ids"
    NOT_SINGLE_TURN = "not-single-turn"
    NOT_EXPANDABLE = "not-expandable"
    BAD_INPUT = "bad-input"
    EPISODE_FINISHED = "episode-finished"
    NO_STATE_TOKEN = "no-state-token"  # noqa: S105 - a kind, not a secret
    MALFORMED_TOKEN = "malformed-token"  # noqa: S105 - a kind, not a secret
    INVALID_TOKEN_SIGNATURE = "invalid-token-signature"  # noqa: S105 - a kind, not a secret
    FOREIGN_TOKEN = "foreign-token"  # noqa: S105 - a kind, not a secret
    STALE_TOKEN = "stale-token"  # noqa: S105 - a kind, not a secret
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    UNKNOWN_ENVIRONMENT = "unknown-environment"
    UNKNOWN_VERIFIER = "unknown-verifier"
    UNKNOWN_ROUTE = "unknown-route"
    NOT_FOUND = "not-found"
    METHOD_NOT_ALLOWED = "method-not-allowed"
    CONFLICT = "conflict"
    GONE = "gone"
    ENVIRONMENT_GONE = "environment-gone"
    SANDBOX_INPUT = "sandbox-input"
    SANDBOX_UNAVAILABLE = "sandbox-unavailable"
    OVERLOADED = "overloaded"
    UNAVAILABLE = "unavailable"
    ENVIRONMENT_UNAVAILABLE = "environment-unavailable"
    REQUEST_TIMEOUT = "request-timeout"
    INTERNAL = "internal"

    @classmethod
    def of_status(cls, status: int) -> ProblemKind:
        """The kind of an error that names none but its status (a bare HTTP exception: no
        route, a wrong method, a family route's 404)."""
        return _STATUS_KINDS.get(status, cls.BAD_REQUEST if status < 500 else cls.INTERNAL)


_STATUS_KINDS = {
    400: ProblemKind.BAD_REQUEST,
    401: ProblemKind.UNAUTHORIZED,
    403: ProblemKind.FORBIDDEN,
    404: ProblemKind.NOT_FOUND,
    405: ProblemKind.METHOD_NOT_ALLOWED,
    409: ProblemKind.CONFLICT,
    410: ProblemKind.GONE,
    413: ProblemKind.BODY_TOO_LARGE,
    415: ProblemKind.UNSUPPORTED_MEDIA_TYPE,
    422: ProblemKind.VALIDATION_ERROR,
    429: ProblemKind.OVERLOADED,
    503: ProblemKind.UNAVAILABLE,
    504: ProblemKind.REQUEST_TIMEOUT,
}
PROBLEM_BASE = "https://envserver.dev/problems/"
"""A problem document's ``type`` is this followed by its kind."""


class FieldError(BaseModel):
    """One reason a request was refused: where (``loc``: body, query or path, then the field
    path), what, and the error's type."""

    loc: list[str | int]
    msg: str
    type: str


class ProblemDocument(BaseModel):
    """An error (RFC 9457). ``kind`` (the last segment of ``type``) is what to branch on. Some
    problems carry more members: ``errors`` (400 malformed JSON, 422), ``reason`` and ``fix``
    (503 ``environment-unavailable``)."""

    model_config = ConfigDict(extra="allow", title="Problem")

    type: str = Field(description="A URI whose last segment is the kind of error.")
    kind: Annotated[ProblemKind | str, Field(union_mode="left_to_right")] = Field(
        description="The kind of error (the last segment of type). A client reading a newer "
        "server may meet a kind it does not know: it gets the text."
    )
    title: str = Field(description="The HTTP status phrase.")
    status: int = Field(description="The HTTP status code.")
    detail: str = Field(description="What went wrong, for a person; never reveals a reference.")
    errors: list[FieldError] | None = Field(None, description="Every field that was refused.")


class ValidationProblemDocument(ProblemDocument):
    """A request the schema or the options refuse (422): ``errors`` lists every field."""

    model_config = ConfigDict(extra="allow", title="ValidationProblem")

    errors: list[FieldError] = Field(description="Every field that was refused.")


ITEM_PROBLEM = (
    "Set when the server refused this item of a batch (its episode had ended, the environment "
    "refused its input): the problem document the same call alone answers with. The item's "
    "status is then error and it has no reward; retrying the same item cannot help. The rest "
    "of the batch is answered as usual."
)


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
    metrics: list[str] = Field(
        default_factory=list,
        description="Every metric a score of this verifier may carry (diagnostics, not parts "
        "of the reward; a score carries a subset).",
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
    problem: ProblemDocument | None = Field(None, description=ITEM_PROBLEM)


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
    components: dict[str, float] = Field(default_factory=dict, description=COMPONENTS)
    metrics: dict[str, float] = Field(default_factory=dict, description=METRICS)
    terminated: bool = False
    truncated: bool = False
    state: str | None = None
    info: dict[str, Any] = Field(default_factory=dict)
    scorer: str = Field("", description=SCORER)
    digest: str = Field("", description=DIGEST)
    problem: ProblemDocument | None = Field(None, description=ITEM_PROBLEM)


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
    components: dict[str, float] = Field(default_factory=dict, description=COMPONENTS)
    metrics: dict[str, float] = Field(default_factory=dict, description=METRICS)
    detail: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)
    latency_ms: float = 0.0
    scorer: str = Field("", description=SCORER)
    digest: str = Field("", description=DIGEST)
    problem: ProblemDocument | None = Field(None, description=ITEM_PROBLEM)


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


class QueueHealth(WireReply):
    """A family's job queue in ``/readyz``."""

    name: str = Field(description="The queue: the family and its name.")
    queued: int = Field(description="Jobs waiting for a worker, on any replica.")
    running: int = Field(description="Jobs a worker holds now, on any replica.")
    oldest_s: float = Field(description="Age of the oldest job, queued or running (0: none).")
    limit: int = Field(description="The most jobs the queue takes; more are refused with 429.")
    workers: int = Field(description="This process's workers taking jobs from it.")
    busy: int = Field(description="Of them, those running a job now.")
    problem: str = Field("", description="Why the queue could not be read (its store is down).")


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
    queues: list[QueueHealth] = Field(
        default_factory=list,
        description="/readyz: the families' job queues (admissions of submitted environments, "
        "say): what they hold in their store (every replica sharing it) and this process's "
        "workers.",
    )
