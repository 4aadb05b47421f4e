"""verl: ``compute_score`` for its reward loop and reward managers, backed by the service.

Point verl at this file (it loads it by path) and pass the service through ``reward_kwargs``.
verl 0.9 (the reward loop; it awaits an ``async`` function):

    reward.custom_reward_function.path=clients/adapters/verl.py
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.url=http://127.0.0.1:8000
    +reward.custom_reward_function.reward_kwargs.verifier=math  # else chosen from data_source

verl 0.7 and 0.8 read the same keys without the ``reward.`` prefix; their ``naive`` manager calls
``compute_score_sync`` and their ``batch`` manager ``compute_score_batch`` (numpy object arrays
in, one request per verifier out).

``compute_score`` shares one HTTP client per process and event loop, and the samples verl awaits
together (its reward loop scores a batch's samples concurrently) go to ``/v1/verify`` as one
request: those arriving within ``batch_window_s`` (5 ms), up to ``batch_size`` (256) items. The
first call of a process prints the service's URL and the verifier to stderr, so a run whose log
lacks that line is not scoring with the service.

The verifier comes from ``verifier`` when given, else from the row's ``data_source`` through
``DATA_SOURCES`` (verl's own names) extended by ``source_verifiers`` (a ``{data_source: verifier}``
mapping); a data source named after a verifier needs no entry. A row with
``extra_info["task_id"]`` is scored by task id, so its reference stays on the server.
Ground truths are read as ``verl_references`` says: numpy values, lists of acceptable answers
(the best score counts) and the code datasets' test formats.

Every result is a dict with the same keys, because verl stacks the dicts of a batch into columns
(``reward_extra_info``; the reward loop takes the first sample's keys for all): ``score``,
``bad_reference`` and each component and metric the verifier declares in the catalogue (the
parts of the reward, then the diagnostics beside it). One a score lacks (an answer with no final
answer carries none) is ``NEUTRAL`` = 0.0. With ``verifier`` given, they are that verifier's;
without it they are every verifier's the server offers, so mixed data sources still line up;
``components`` (a list of names, of components or metrics) sets them explicitly.

verl cannot mask a sample. A sample whose reference is unusable (a missing ground truth:
``None`` or ``NaN``, as a column with gaps gives it; or an empty or unparsable one: a data error
no retry can fix) scores 0 with ``bad_reference`` = 1.0. One the service could not score for a
reason of its own (timeout, infrastructure) raises ``RewardUnavailable`` instead of returning a
made-up 0.

With ``run`` (``+reward.custom_reward_function.reward_kwargs.run=grpo-7``), the service counts
each task id's outcome in that run's statistics, which its curriculum draws by (verl's
dataloader: ``clients.adapters.verl_curriculum.CurriculumSampler``); with ``record`` (a path),
every scored item is appended to a rollouts file that ``envserver reverify`` scores again.

Which function to name depends on verl's reward manager (``reward.reward_manager.name``): the
reward loop's ``naive`` (the default), ``dapo``, ``gdpo`` and ``rate_limited`` await the async
``compute_score``; ``remote`` runs the function in Ray actors that cannot await, refuses an
async one ("Async reward score is not supported"), and takes ``compute_score_sync``.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from clients.adapters.rows import BAD_REFERENCE, bad_reference, missing
from clients.adapters.verl_references import plain, references
from clients.http import AsyncEnvServerClient, EnvServerClient, default_url
from clients.rollouts import RolloutLog
from envserver.wire import Catalogue, VerifyResult

NEUTRAL = 0.0
"""The value of a declared component a score does not carry."""
# BAD_REFERENCE is also the key (1.0 or 0.0) that flags a sample scored 0 because its ground
# truth is unusable.

DATA_SOURCES: dict[str, str] = {
    "openai/gsm8k": "math",
    "lighteval/MATH": "math",
    "DigitalLearningGmbH/MATH-lighteval": "math",
    "HuggingFaceH4/MATH-500": "math",
    "math_dapo": "math",
    "math_dapo_reasoning": "math",
    "aime": "math",  # and every data source starting with it (aime2024, aime2025, ...)
    "numina_aops_forum": "math",
    "numina_synthetic_math": "math",
    "numina_amc_aime": "math",
    "numina_synthetic_amc": "math",
    "numina_cn_k12": "math",
    "numina_olympiads": "math",
    "codecontests": "code",
    "apps": "code",
    "taco": "code",
    "codeforces": "code",
    "livecodebench": "code",
}
"""verl's own ``data_source`` names for the datasets our verifiers cover (a name matches itself
and every data source it begins, as verl's own dispatch does for ``aime*``)."""
PREFIXES = ("aime", "livecodebench")

BATCH_WINDOW_S = 0.005
BATCH_SIZE = 256


class RewardUnavailable(RuntimeError):
    """The service could not score a sample (its check timed out or failed)."""


class UnknownDataSource(ValueError):
    """A row's ``data_source`` names no verifier."""


def _pick_verifier(
    data_source: str, verifier: str | None, extra: Mapping[str, str] | None, offered: set[str]
) -> str:
    """The verifier for a row; raises ``UnknownDataSource`` naming the fix."""
    if verifier:
        return verifier
    table = {**DATA_SOURCES, **(extra or {})}
    if data_source in table:
        return table[data_source]
    for prefix in PREFIXES:
        if data_source.startswith(prefix):
            return table[prefix]
    if data_source in offered:
        return data_source
    raise UnknownDataSource(
        f"data_source {data_source!r} names no verifier of the service (it has "
        f"{', '.join(sorted(offered))}); pass one for every row with "
        "+reward.custom_reward_function.reward_kwargs.verifier=<name>, or map data sources with "
        f"'+reward.custom_reward_function.reward_kwargs.source_verifiers={{{data_source}: <name>}}'"
    )


def _keys(
    catalogue: Catalogue, verifier: str | None, components: Sequence[str] | None
) -> list[str]:
    """The result keys besides ``score`` and ``bad_reference``, in a stable order."""
    if components is not None:
        return list(components)
    declared = {v.name: [*v.components, *v.metrics] for v in catalogue.verifiers}
    names = [verifier] if verifier else sorted(declared)
    return list(dict.fromkeys(c for name in names for c in declared.get(name, ())))


def _row(results: Sequence[VerifyResult], index: int, keys: list[str]) -> dict[str, float]:
    """A sample's dict from the results of its references: the best scored one counts; none
    scored (none usable, or none at all) is a bad reference."""
    scored = [r for r in results if r.reward is not None]
    unscored = [r for r in results if r.reward is None]
    failed = [r for r in unscored if not bad_reference(r)]
    if failed:
        raise RewardUnavailable(
            f"sample {index}: {failed[0].status}: {failed[0].detail or 'no detail'}"
        )
    if not scored:
        return {"score": 0.0, BAD_REFERENCE: 1.0, **dict.fromkeys(keys, NEUTRAL)}
    best = max(scored, key=lambda r: r.reward or 0.0)
    recorded = {**best.metrics, **best.components}
    parts = {key: float(recorded.get(key, NEUTRAL)) for key in keys}
    return {"score": float(best.reward or 0.0), BAD_REFERENCE: 0.0, **parts}


_ANNOUNCED: set[tuple[str, str | None]] = set()


def _announce(url: str | None, verifier: str | None) -> None:
    """Say once per process which service and verifier score this run."""
    key = (url or default_url(), verifier)
    if key not in _ANNOUNCED:
        _ANNOUNCED.add(key)
        print(
            f"envserver verl adapter: scoring with the service at {key[0]}, verifier "
            f"{verifier or 'chosen per data_source'}",
            file=sys.stderr,
            flush=True,
        )


class _Target(NamedTuple):
    """What a sample is scored against: a verifier and its references, or a task id."""

    verifier: str | None
    items: list[dict[str, Any]]


def _target(
    source: str,
    text: str,
    truth: Any,
    info: Any,
    *,
    verifier: str | None,
    data_sources: Mapping[str, str] | None,
    offered: set[str],
) -> _Target:
    task_id = (plain(info) or {}).get("task_id") if isinstance(info, Mapping) else None
    if task_id:
        return _Target(None, [{"response": text, "task_id": task_id}])
    name = _pick_verifier(str(source), verifier, data_sources, offered)
    usable = [r for r in references(name, truth) if not missing(r)]
    return _Target(name, [{"response": text, "reference": r} for r in usable])


# --- the batch form (verl 0.7/0.8 ``batch`` manager) and the sync per-sample form -------------

_CATALOGUES: dict[tuple[str | None, str | None], Catalogue] = {}


def _catalogue(url: str | None, api_key: str | None) -> Catalogue:
    # Once per process and server: the per-sample forms must not ask for every sample.
    if (url, api_key) not in _CATALOGUES:
        with EnvServerClient(url, api_key=api_key) as client:
            _CATALOGUES[url, api_key] = client.envs()
    return _CATALOGUES[url, api_key]


_LOGS: dict[str, RolloutLog] = {}


def _log(record: str | None) -> RolloutLog | None:
    """The process's one log of the rollouts file ``record`` (None: nothing recorded)."""
    if record is None:
        return None
    if record not in _LOGS:
        _LOGS[record] = RolloutLog(record)
    return _LOGS[record]


def compute_score_batch(
    data_sources: Sequence[str],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
    *,
    url: str | None = None,
    verifier: str | None = None,
    api_key: str | None = None,
    options: Mapping[str, Any] | None = None,
    components: Sequence[str] | None = None,
    source_verifiers: Mapping[str, str] | None = None,
    run: str | None = None,
    record: str | None = None,
    **_: Any,
) -> list[dict[str, float]]:
    """One ``{"score", "bad_reference", <components>}`` dict per sample, in order, every dict
    with the same keys, from one request per verifier. Raises ``RewardUnavailable`` for a
    sample the service could not score, ``UnknownDataSource`` for a row no verifier covers."""
    _announce(url, verifier)
    catalogue = _catalogue(url, api_key)
    offered = {v.name for v in catalogue.verifiers}
    sources = [str(s) for s in plain(data_sources)]
    infos = list(plain(extra_infos)) if extra_infos is not None else [None] * len(sources)
    targets = [
        _target(s, t, g, i, verifier=verifier, data_sources=source_verifiers, offered=offered)
        for s, t, g, i in zip(sources, solution_strs, list(ground_truths), infos, strict=True)
    ]
    groups: dict[str | None, list[tuple[int, int]]] = {}  # verifier -> (sample, item)
    for index, target in enumerate(targets):
        for item in range(len(target.items)):
            groups.setdefault(target.verifier, []).append((index, item))
    results: list[list[VerifyResult]] = [[] for _ in targets]
    with EnvServerClient(url, api_key=api_key) as client:
        for name, where in groups.items():
            batch = [targets[i].items[j] for i, j in where]
            scored = client.verify(batch, verifier=name, options=options, run=run).results
            if (log := _log(record)) is not None:
                log.write(batch, scored, verifier=name, options=options, run=run)
            for (index, _item), result in zip(where, scored, strict=True):
                results[index].append(result)
    keys = _keys(catalogue, verifier, components)
    return [_row(r, i, keys) for i, r in enumerate(results)]


def compute_score_sync(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float]:
    """The synchronous per-sample form (verl 0.7/0.8 ``naive`` manager): the same dict as
    ``compute_score_batch`` gives for the sample, one request per call."""
    return compute_score_batch(
        [data_source],
        [solution_str],
        [ground_truth],
        [extra_info],
        **kwargs,
    )[0]


# --- the async per-sample form (verl 0.9's reward loop), batched across concurrent calls ------


class _Batcher:
    """Collects the items one event loop's concurrent calls send to one verifier, and posts
    them together once the window closes or the batch is full."""

    # Plain classes, not dataclasses: verl loads this file by path, without a module entry
    # that dataclasses would look its annotations up in.
    def __init__(
        self,
        client: AsyncEnvServerClient,
        verifier: str | None,
        options: Mapping[str, Any] | None,
        window_s: float,
        size: int,
        *,
        run: str | None = None,
        log: RolloutLog | None = None,
    ) -> None:
        self.client, self.verifier, self.options = client, verifier, options
        self.window_s, self.size = window_s, size
        self.run, self.log = run, log
        self.pending: list[tuple[dict[str, Any], asyncio.Future[VerifyResult]]] = []
        self.timer: asyncio.TimerHandle | None = None
        self.sending: set[asyncio.Task[None]] = set()

    async def score(self, item: dict[str, Any]) -> VerifyResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[VerifyResult] = loop.create_future()
        self.pending.append((item, future))
        if len(self.pending) >= self.size:
            self.flush()
        elif self.timer is None:
            self.timer = loop.call_later(self.window_s, self.flush)
        return await future

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        batch, self.pending = self.pending, []
        if batch:
            task = asyncio.get_running_loop().create_task(self._send(batch))
            self.sending.add(task)  # held until done: the loop keeps only weak references
            task.add_done_callback(self.sending.discard)

    async def _send(self, batch: list[tuple[dict[str, Any], asyncio.Future[VerifyResult]]]) -> None:
        try:
            items = [item for item, _ in batch]
            reply = await self.client.verify(
                items, verifier=self.verifier, options=self.options, run=self.run
            )
            if self.log is not None:
                self.log.write(
                    items, reply.results, verifier=self.verifier, options=self.options,
                    run=self.run,
                )  # fmt: skip
        except Exception as exc:  # every waiting sample learns why
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), result in zip(batch, reply.results, strict=True):
            if not future.done():
                future.set_result(result)


class _Shared:
    """One event loop's client, catalogue and batchers, per service."""

    def __init__(self, client: AsyncEnvServerClient, catalogue: asyncio.Task[Catalogue]) -> None:
        self.client, self.catalogue = client, catalogue
        self.batchers: dict[tuple[str | None, str, str | None, str | None], _Batcher] = {}


# Per event loop (an HTTP client's connections belong to the loop that opened them), per
# service; dropped with the loop.
_SHARED: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str | None, str | None], _Shared]
] = weakref.WeakKeyDictionary()


def _shared(url: str | None, api_key: str | None) -> _Shared:
    loop = asyncio.get_running_loop()
    services = _SHARED.setdefault(loop, {})
    if (url, api_key) not in services:
        client = AsyncEnvServerClient(url, api_key=api_key)
        # One catalogue request however many calls arrive before it is answered.
        services[url, api_key] = _Shared(client, loop.create_task(client.envs()))
    shared = services[url, api_key]
    if shared.catalogue.done() and shared.catalogue.exception() is not None:
        shared.catalogue = loop.create_task(shared.client.envs())  # ask again after a failure
    return shared


async def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    url: str | None = None,
    verifier: str | None = None,
    api_key: str | None = None,
    options: Mapping[str, Any] | None = None,
    components: Sequence[str] | None = None,
    source_verifiers: Mapping[str, str] | None = None,
    batch_window_s: float = BATCH_WINDOW_S,
    batch_size: int = BATCH_SIZE,
    run: str | None = None,
    record: str | None = None,
    **_: Any,
) -> dict[str, float]:
    """The async per-sample form (verl 0.9's reward loop): the same dict as
    ``compute_score_batch`` gives for the sample; concurrent calls share requests."""
    _announce(url, verifier)
    shared = _shared(url, api_key)
    catalogue = await asyncio.shield(shared.catalogue)
    offered = {v.name for v in catalogue.verifiers}
    target = _target(
        data_source,
        solution_str,
        ground_truth,
        extra_info,
        verifier=verifier,
        data_sources=source_verifiers,
        offered=offered,
    )
    key = (target.verifier, repr(sorted((options or {}).items())), run, record)
    if key not in shared.batchers:
        shared.batchers[key] = _Batcher(
            shared.client, target.verifier, options, batch_window_s, batch_size,
            run=run, log=_log(record),
        )  # fmt: skip
    batcher = shared.batchers[key]
    results = await asyncio.gather(*(batcher.score(item) for item in target.items))
    return _row(results, 0, _keys(catalogue, verifier, components))
