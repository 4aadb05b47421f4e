"""The ``envserver`` command line: run the server, or talk to one.

    envserver serve --port 8000
    envserver envs [ENV_ID]
    envserver reset math --seed 7 --option difficulty=easy
    envserver step math "$STATE" 'The answer is \\boxed{42}'
    envserver verify --verifier math --reference 0.5 '\\boxed{1/2}'
    envserver verify --task-id 'math@1/7' - < response.txt
    envserver audit [--url URL] [--env ID]   (the families' red-team suites)
    envserver opt evaluate answers.jsonl       (a family's tools: environments/<family>/cli.py)

Exit codes: 0 done; 1 the server refused or failed (the problem's detail is on stderr), or could
not be reached; 2 bad usage (a malformed red-team suite included); 3 the server answered but an
item has no reward (status ``timeout`` or ``error``); 4 ``audit``: a red-team case failed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from pydantic import BaseModel, ValidationError

from clients.errors import EnvServerError
from clients.http import DEFAULT_URL, EnvServerClient
from clients.retry import RetryPolicy
from envserver.wire import (
    Catalogue,
    EnvInfo,
    ResetResponse,
    StepResponse,
    VerifyItem,
    VerifyResponse,
)

if TYPE_CHECKING:
    from envserver.config import Settings
    from envserver.redteam import CaseResult, Family, Suite

EXIT_SERVER = 1
EXIT_USAGE = 2
EXIT_NO_REWARD = 3
EXIT_AUDIT_FAILED = 4
STDIN = "-"


def _family_tools() -> list[str]:
    """The families that bring command-line tools (an ``environments/<family>/cli.py``),
    found by looking at the folders, without importing any family."""
    spec = importlib.util.find_spec("environments")
    folders = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    return sorted(
        entry.name
        for folder in folders
        for entry in folder.iterdir()
        if (entry / "cli.py").is_file() and not entry.name.startswith("_")
    )


app = typer.Typer(
    name="envserver",
    help="A stateless reward service for RL with verifiable rewards: serve it, call it, or "
    "run a family's tools.",
    epilog="A family's tools: envserver FAMILY --help, for FAMILY in "
    + ", ".join(_family_tools())
    + ".",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

Url = Annotated[
    str,
    typer.Option("--url", envvar="ENVSERVER_URL", help="The server's base URL."),
]
ApiKey = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar="ENVSERVER_API_KEY",
        help="Bearer API key, if the server requires one.",
        show_default="none",
    ),
]
JsonOutput = Annotated[
    bool,
    typer.Option("--json", help="Print the wire JSON of the answer.", show_default="off"),
]
Options = Annotated[
    list[str] | None,
    typer.Option(
        "--option",
        "-o",
        help="An option as KEY=VALUE (VALUE is JSON if it parses, else a string); repeatable.",
        show_default="the environment's or verifier's defaults",
    ),
]


# --- helpers ------------------------------------------------------------------------------------


def _client(url: str, api_key: str | None) -> EnvServerClient:
    # A person is waiting: fewer attempts than a trainer's default before reporting the failure.
    return EnvServerClient(url, api_key=api_key or "", retry=RetryPolicy(attempts=3))


def _fail(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def _reporting() -> Iterator[None]:
    """Turn the clients' exceptions into a message on stderr and an exit code."""
    try:
        yield
    except EnvServerError as exc:
        _fail(str(exc), EXIT_SERVER)
    except ValidationError as exc:  # the arguments cannot form a valid request
        _fail("; ".join(e["msg"] for e in exc.errors()), EXIT_USAGE)


def _parse_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--option")
        try:
            options[key] = json.loads(text)
        except json.JSONDecodeError:
            options[key] = text
    return options


def _read_stdin() -> str:
    # `echo answer | envserver ...` adds one newline that is not part of the answer.
    return sys.stdin.read().removesuffix("\n")


def _texts(values: Sequence[str], name: str) -> list[str]:
    """``values`` with the one ``-`` (if any) replaced by standard input."""
    if sum(value == STDIN for value in values) > 1:
        raise typer.BadParameter("standard input ('-') can be read only once", param_hint=name)
    return [_read_stdin() if value == STDIN else value for value in values]


def _emit(model: BaseModel, as_json: bool, human: Callable[[], None]) -> None:
    if as_json:
        typer.echo(model.model_dump_json(indent=2))
    else:
        human()


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _first_sentence(text: str, limit: int = 72) -> str:
    sentence = text.split(". ", maxsplit=1)[0].strip()
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _show_catalogue(catalogue: Catalogue) -> None:
    typer.echo("environments:")
    for env in catalogue.envs:
        name = f"{env.id}@{env.version}"
        typer.echo(f"  {name:<24} {env.kind:<12} {_first_sentence(env.description)}")
    typer.echo("verifiers:")
    for check in catalogue.verifiers:
        typer.echo(f"  {check.name + '@' + check.version:<24} {_first_sentence(check.description)}")
    if catalogue.disabled:
        typer.echo("disabled (not served here):")
        for family in catalogue.disabled:
            typer.echo(f"  {family.name:<24} {family.reason}")
            if family.fix:
                typer.echo(f"  {'':<24} to enable: {family.fix}")


def _show_env(env: EnvInfo) -> None:
    typer.echo(f"{env.id}@{env.version} ({env.kind}, {env.observation_format} observations)")
    typer.echo(env.description)
    typer.echo(f"action: {env.action_format}")
    properties: dict[str, Any] = env.options_schema.get("properties", {})
    if properties:
        typer.echo("options:")
        for name, schema in properties.items():
            default = f" = {json.dumps(schema['default'])}" if "default" in schema else ""
            typer.echo(f"  {name}{default}: {schema.get('description', '')}")


def _show_reset(response: ResetResponse) -> None:
    if response.status != "ok":
        typer.echo(f"status: {response.status}: {response.detail}")
        return
    typer.echo(_observation(response.observation))
    typer.echo("")
    typer.echo(f"task_id: {response.task_id}")
    typer.echo(f"state: {response.state}")


def _show_step(response: StepResponse) -> None:
    flags = [flag for flag in ("terminated", "truncated") if getattr(response, flag)]
    typer.echo(
        f"reward: {_number(response.reward)}  status: {response.status}"
        + (f"  {' '.join(flags)}" if flags else "")
    )
    if response.detail:
        typer.echo(f"detail: {response.detail}")
    if response.components:
        parts = " ".join(f"{k}={v:g}" for k, v in response.components.items())
        typer.echo(f"components: {parts}")
    if response.observation:
        typer.echo(f"observation: {_observation(response.observation)}")
    typer.echo(f"state: {response.state}")


def _show_verify(response: VerifyResponse) -> None:
    for result in response.results:
        line = f"{_number(result.reward)}\t{result.status}"
        typer.echo(f"{line}\t{result.detail}" if result.detail else line)


def _observation(observation: Any) -> str:
    if isinstance(observation, list):
        return "\n".join(f"[{m.role}] {m.content}" for m in observation)
    return str(observation or "")


def _exit_for(statuses: Sequence[str]) -> None:
    if any(status in ("timeout", "error") for status in statuses):
        raise typer.Exit(EXIT_NO_REWARD)


# --- commands -----------------------------------------------------------------------------------


@app.command()
def serve(
    *,
    host: Annotated[
        str | None,
        typer.Option(
            help="Bind address; overrides ENVSERVER_HOST.",
            show_default="ENVSERVER_HOST, else 127.0.0.1",
        ),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(
            help="Port; overrides ENVSERVER_PORT.",
            show_default="ENVSERVER_PORT, else 8000",
            min=0,
            max=65535,
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Server processes sharing the port (any of them serves any call, since state "
            "lives in tokens); the pool and sandbox workers are split between them. Overrides "
            "ENVSERVER_SERVER_PROCESSES.",
            show_default="ENVSERVER_SERVER_PROCESSES, else 1",
            min=1,
            max=64,
        ),
    ] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="Deploy to a Ray cluster as a Ray Serve application (the ray extra) and return "
            "once it is ready; HOST and PORT are then where Serve's proxies listen.",
            show_default="off: serve here with uvicorn",
        ),
    ] = False,
    ray_address: Annotated[
        str, typer.Option(help="With --ray: the cluster's address ('auto': this node's).")
    ] = "auto",
    replicas: Annotated[
        int, typer.Option(help="With --ray: replicas (the least, with --max-replicas).", min=1)
    ] = 1,
    max_replicas: Annotated[
        int | None,
        typer.Option(
            help="With --ray: autoscale up to this many replicas on requests in flight.",
            show_default="fixed at --replicas",
            min=1,
        ),
    ] = None,
) -> None:
    """Run the server (settings from ENVSERVER_* variables; see envserver.config), or with --ray
    deploy it to a Ray cluster (see envserver.ray_serve). A setting that cannot be used is one
    ``error:`` line and exit code 2."""
    # The server's dependencies load only here, so the client commands stay light.
    from envserver.app import run  # noqa: PLC0415
    from envserver.config import ConfigError, Settings  # noqa: PLC0415

    if ray and workers is not None:
        # A Ray replica is one server process; Serve scales them.
        _fail("--workers is for a server on this machine; with --ray use --replicas", EXIT_USAGE)
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = port
    if workers is not None:
        overrides["server_processes"] = workers
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        _fail("; ".join(_setting_error(e) for e in exc.errors()), EXIT_USAGE)
    try:
        if ray:
            _deploy_on_ray(settings, ray_address, replicas, max_replicas or replicas)
        else:
            run(settings)
    except ConfigError as exc:
        _fail(str(exc), EXIT_USAGE)


def _deploy_on_ray(settings: Settings, address: str, replicas: int, max_replicas: int) -> None:
    try:
        from envserver.ray_serve import Scaling, deploy  # noqa: PLC0415
    except ImportError as exc:
        _fail(f"--ray needs the ray extra ({exc}): pip install 'envserver[ray]'", EXIT_USAGE)
    if max_replicas < replicas:
        _fail("--max-replicas must be at least --replicas", EXIT_USAGE)
    url = deploy(address, Scaling(min_replicas=replicas, max_replicas=max_replicas), settings)
    typer.echo(f"envserver is served by Ray Serve at {url} (stop it with: serve shutdown)")


def _setting_error(error: Any) -> str:
    name = "_".join(str(part) for part in error["loc"]).upper()
    return f"ENVSERVER_{name}: {error['msg']}"


@app.command()
def envs(
    env_id: Annotated[
        str | None, typer.Argument(help="Show this environment only.", show_default="all")
    ] = None,
    *,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """List the environments and verifiers, or show one environment's spec."""
    with _reporting(), _client(url, api_key) as client:
        if env_id is None:
            catalogue = client.envs()
            _emit(catalogue, as_json, lambda: _show_catalogue(catalogue))
        else:
            env = client.env(env_id)
            _emit(env, as_json, lambda: _show_env(env))


@app.command()
def reset(
    env_id: Annotated[str, typer.Argument(help="Environment id, e.g. math.")],
    *,
    seed: Annotated[
        int | None, typer.Option(help="Task seed.", min=0, show_default="random")
    ] = None,
    option: Options = None,
    task_id: Annotated[
        str | None,
        typer.Option(help="Replay this task (instead of --seed/--option).", show_default="none"),
    ] = None,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """Start an episode: prints the observation, the task id and the state token."""
    options = _parse_options(option)
    with _reporting(), _client(url, api_key) as client:
        response = client.reset(env_id, seed=seed, options=options, task_id=task_id)
    _emit(response, as_json, lambda: _show_reset(response))
    _exit_for([response.status])


@app.command()
def step(
    env_id: Annotated[str, typer.Argument(help="Environment id, e.g. math.")],
    state: Annotated[str, typer.Argument(help="State token from reset or step ('-': stdin).")],
    action: Annotated[str, typer.Argument(help="The action, e.g. an answer ('-': stdin).")],
    *,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """Apply an action to the episode in a state token: prints reward, status and next state."""
    state, action = _texts([state, action], "STATE/ACTION")
    with _reporting(), _client(url, api_key) as client:
        response = client.step(env_id, state.strip(), action)
    _emit(response, as_json, lambda: _show_step(response))
    _exit_for([response.status])


@app.command()
def verify(
    responses: Annotated[
        list[str], typer.Argument(help="Responses to score ('-': read one from stdin).")
    ],
    *,
    verifier: Annotated[
        str | None,
        typer.Option(help="Verifier name, with --reference.", show_default="none"),
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="Reference answer (a string).", show_default="none")
    ] = None,
    reference_json: Annotated[
        str | None,
        typer.Option(help="Reference as JSON, for structured references.", show_default="none"),
    ] = None,
    task_id: Annotated[
        str | None,
        typer.Option(help="Score against this task, e.g. 'math@1/7'.", show_default="none"),
    ] = None,
    option: Options = None,
    timeout_s: Annotated[
        float | None,
        typer.Option(
            help="Per-item time limit in seconds (the server caps it).",
            min=0.001,
            show_default="the verifier's own",
        ),
    ] = None,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """Score responses with a verifier and a reference, or against a task id."""
    target = _reference(reference, reference_json, task_id, verifier)
    texts = _texts(responses, "RESPONSES")
    options = _parse_options(option)
    with _reporting(), _client(url, api_key) as client:
        items = [VerifyItem(response=text, **target) for text in texts]
        answer = client.verify(items, verifier=verifier, options=options, timeout_s=timeout_s)
    _emit(answer, as_json, lambda: _show_verify(answer))
    _exit_for([result.status for result in answer.results])


@app.command()
def prove(
    *,
    theory: Annotated[
        str | None,
        typer.Option(help="A theory id the server offers.", show_default="the first it serves"),
    ] = None,
    lemma: Annotated[
        list[str] | None,
        typer.Option(help="Lemma(s) to prove; repeatable.", show_default="every lemma"),
    ] = None,
    budget: Annotated[int, typer.Option(help="MCTS expansions per lemma.", min=1)] = 300,
    env_id: Annotated[str, typer.Option("--env", help="The proof environment.")] = "tamarin/proof",
    show_proof: Annotated[
        bool, typer.Option("--proof", help="Print MCTS's proof script.", show_default="off")
    ] = False,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
) -> None:
    """Prove lemmas by MCTS and by Tamarin's greedy choice (always method 1); compare them."""
    from clients.proof_search import MCTSConfig, greedy, mcts  # noqa: PLC0415

    with _reporting(), _client(url, api_key) as client:
        first = _opened(client.reset(env_id, options={} if theory is None else {"theory": theory}))
        theory = theory or str(first.info.get("theory"))
        lemmas = lemma or list(first.info.get("lemmas") or [first.info.get("lemma")])
        typer.echo(f"{'lemma':<36} {'greedy':>18} {'mcts':>18} {'expansions':>10}")
        for name in lemmas:
            episode = _opened(client.reset(env_id, options={"theory": theory, "lemma": name}))
            found = [
                greedy(client, env_id, episode),
                mcts(client, env_id, episode, MCTSConfig(budget)),
            ]
            cells = [f"{r.outcome} {r.proof_size}" if r.found else "not found" for r in found]
            typer.echo(f"{name:<36} {cells[0]:>18} {cells[1]:>18} {found[1].calls:>10}")
            if show_proof and found[1].proof:
                typer.echo(found[1].proof)


@app.command()
def audit(
    *,
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="Run the cases against this server; without it, in this process through the "
            "server's registry (same families, same plugins).",
            show_default="in process",
        ),
    ] = None,
    env_id: Annotated[
        str | None,
        typer.Option(
            "--env",
            help="Only this family's suite, or the cases that score with this environment or "
            "verifier.",
            show_default="every family",
        ),
    ] = None,
    plugins: Annotated[
        str,
        typer.Option(
            "--plugins",
            envvar="ENVSERVER_PLUGINS",
            help="Plugin modules (comma-separated) whose suites run too, as the server loads them.",
            show_default="ENVSERVER_PLUGINS, else none",
        ),
    ] = "",
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """Run the families' red-team suites (redteam.toml): hacks that must not earn reward and
    equivalent answers that must keep it. Prints a table per family; exit code 4 if any case
    fails, 2 if a suite is malformed. Cases a server cannot serve (disabled) are skipped."""
    from envserver import redteam  # noqa: PLC0415

    modules = [name.strip() for name in plugins.split(",") if name.strip()]
    try:
        suites, without = redteam.load_suites(redteam.families(modules))
    except redteam.SuiteError as exc:
        _fail(str(exc), EXIT_USAGE)
    chosen = redteam.select(suites, env_id)
    if env_id is not None and not chosen:
        _fail(f"no red-team suite has cases for {env_id!r}", EXIT_USAGE)
    if url is None:
        from envserver.registry import discover  # noqa: PLC0415  (the server's side: only here)

        results = redteam.run(redteam.InProcess(discover(modules)), chosen)
    else:
        from clients.audit import OverHttp  # noqa: PLC0415

        with _reporting(), _client(url, api_key) as client:
            results = redteam.run(OverHttp(client), chosen)
    missing = [] if env_id is not None else without
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "results": [result.as_json() for result in results],
                    "without_suite": [family.name for family in missing],
                },
                indent=2,
            )
        )
    else:
        _show_audit(chosen, results, missing)
    if any(result.verdict == "fail" for result in results):
        raise typer.Exit(EXIT_AUDIT_FAILED)


def _show_audit(
    suites: Sequence[Suite], results: Sequence[CaseResult], missing: Sequence[Family]
) -> None:
    for suite in suites:
        rows = [r for r in results if r.family == suite.family]
        counts = {v: sum(r.verdict == v for r in rows) for v in ("pass", "fail", "skip")}
        typer.echo(
            f"{suite.family} ({suite.path}): {counts['pass']} passed, {counts['fail']} failed, "
            f"{counts['skip']} skipped"
        )
        typer.echo(f"  {'case':<44} {'expect':<10} {'got':<16} verdict")
        for r in rows:
            got = "-" if r.got is None else f"{r.got.status} {_number(r.got.reward)}"
            line = f"  {r.case.name[:44]:<44} {r.case.expect:<10} {got:<16} {r.verdict}"
            typer.echo(line + (f": {_first_sentence(r.detail)}" if r.verdict != "pass" else ""))
    for family in missing:
        typer.echo(f"{family.name}: no red-team suite (expected at {family.suite})")
    failed = sum(r.verdict == "fail" for r in results)
    typer.echo(f"{len(results)} cases: {failed} failed")


def _opened(episode: ResetResponse) -> ResetResponse:
    """A reset that opened an episode; a failed one (``timeout``/``error``: no state) ends the
    command with its reason."""
    if episode.state is None:
        _fail(f"the reset failed ({episode.status}): {episode.detail}", EXIT_NO_REWARD)
    return episode


def _reference(
    reference: str | None, reference_json: str | None, task_id: str | None, verifier: str | None
) -> dict[str, Any]:
    """The item field that names what a response is scored against."""
    if sum(value is not None for value in (reference, reference_json, task_id)) != 1:
        raise typer.BadParameter("give exactly one of --reference, --reference-json, --task-id")
    if task_id is not None:
        if verifier is not None:
            raise typer.BadParameter("--verifier goes with --reference; a task id names its env")
        return {"task_id": task_id}
    if verifier is None:
        raise typer.BadParameter("--reference needs --verifier")
    if reference_json is not None:
        try:
            return {"reference": json.loads(reference_json)}
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"not JSON: {exc}", param_hint="--reference-json") from None
    return {"reference": reference}


def main() -> None:
    """The ``envserver`` console script: ``envserver FAMILY ...`` runs that family's own tools
    (its ``environments/<family>/cli.py`` app, imported only then: a family imports its heavy
    dependencies, which the other commands never need)."""
    family = sys.argv[1] if len(sys.argv) > 1 else ""
    if family in _family_tools():
        tools = importlib.import_module(f"environments.{family}.cli")
        tools.app(args=sys.argv[2:], prog_name=f"envserver {family}")
        return
    app(prog_name="envserver")


if __name__ == "__main__":
    main()
