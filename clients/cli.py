"""The ``envserver`` command's HTTP commands: talk to a running server.

    envserver envs [ENV_ID]
    envserver reset math --seed 7 --option difficulty=easy
    envserver step math "$STATE" 'The answer is \\boxed{42}'
    envserver verify --verifier math --reference 0.5 '\\boxed{1/2}'
    envserver verify --task-id 'math@1/7' - < response.txt
    envserver reverify rollouts.jsonl

The server's own commands (``serve``, ``audit``, the families' tools) are ``envserver.cli``'s,
which mounts these beside them: this module imports nothing of the server but its wire schemas.

Exit codes: 0 done; 1 the server refused or failed (the problem's detail is on stderr), or could
not be reached; 2 bad usage; 3 the server answered but an item has no reward (status ``timeout``
or ``error``); 4 ``reverify`` found rewards that changed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

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

EXIT_SERVER = 1
EXIT_USAGE = 2
EXIT_NO_REWARD = 3
EXIT_DRIFT = 4
STDIN = "-"

app = typer.Typer(
    name="envserver",
    help="Talk to a running envserver: its catalogue, episodes and verifiers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help: rich's tables cut long defaults short at 80 columns and print a type
    # after every flag ("--json <bool>").
    rich_markup_mode=None,
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


def connect(url: str, api_key: str | None) -> EnvServerClient:
    # A person is waiting: fewer attempts than a trainer's default before reporting the failure.
    return EnvServerClient(url, api_key=api_key or "", retry=RetryPolicy(attempts=3))


def fail(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def reporting() -> Iterator[None]:
    """Turn the clients' exceptions into a message on stderr and an exit code."""
    try:
        yield
    except EnvServerError as exc:
        fail(str(exc), EXIT_SERVER)
    except ValidationError as exc:  # the arguments cannot form a valid request
        fail("; ".join(e["msg"] for e in exc.errors()), EXIT_USAGE)


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


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def first_sentence(text: str, limit: int = 72) -> str:
    sentence = text.split(". ", maxsplit=1)[0].strip()
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


def _show_catalogue(catalogue: Catalogue) -> None:
    typer.echo("environments:")
    for env in catalogue.envs:
        name = f"{env.id}@{env.version}"
        typer.echo(f"  {name:<24} {env.kind:<12} {first_sentence(env.description)}")
    typer.echo("verifiers:")
    for check in catalogue.verifiers:
        typer.echo(f"  {check.name + '@' + check.version:<24} {first_sentence(check.description)}")
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
        f"reward: {number(response.reward)}  status: {response.status}"
        + (f"  {' '.join(flags)}" if flags else "")
    )
    if response.detail:
        typer.echo(f"detail: {response.detail}")
    for name, values in (("components", response.components), ("metrics", response.metrics)):
        if values:
            typer.echo(f"{name}: {' '.join(f'{k}={v:g}' for k, v in values.items())}")
    if response.observation:
        typer.echo(f"observation: {_observation(response.observation)}")
    typer.echo(f"state: {response.state}")


def _show_verify(response: VerifyResponse) -> None:
    for result in response.results:
        line = f"{number(result.reward)}\t{result.status}"
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
    with reporting(), connect(url, api_key) as client:
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
    with reporting(), connect(url, api_key) as client:
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
    with reporting(), connect(url, api_key) as client:
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
    with reporting(), connect(url, api_key) as client:
        items = [VerifyItem(response=text, **target) for text in texts]
        answer = client.verify(items, verifier=verifier, options=options, timeout_s=timeout_s)
    _emit(answer, as_json, lambda: _show_verify(answer))
    _exit_for([result.status for result in answer.results])


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


@app.command()
def reverify(
    path: Annotated[
        Path, typer.Argument(help="A JSONL file of stored rollouts (clients/rollouts.py).")
    ],
    *,
    batch: Annotated[int, typer.Option(help="Rows per request.", min=1, max=2048)] = 256,
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """Score stored rollouts again and report, per family, how many rewards changed and which
    digests of the code that scored them differ from today's. Exit code 4 when a reward
    changed."""
    from clients.reverify import report  # noqa: PLC0415 - only this command needs it
    from clients.reverify import reverify as rescore  # noqa: PLC0415
    from clients.rollouts import RolloutFormatError, read_rollouts  # noqa: PLC0415

    if not path.is_file():
        raise typer.BadParameter(f"no such file: {path}", param_hint="PATH")
    try:
        rows = list(read_rollouts(path))
    except (RolloutFormatError, UnicodeDecodeError) as exc:
        fail(str(exc), EXIT_USAGE)
    with reporting(), connect(url, api_key) as client:
        drift = rescore(client, rows, batch=batch)
    if as_json:
        typer.echo(json.dumps(drift.as_json(), indent=2))
    else:
        for line in report(drift):
            typer.echo(line)
    if drift.changes:
        raise typer.Exit(EXIT_DRIFT)


@app.command("eval")
def eval_command(
    *,
    env: Annotated[str, typer.Option("--env", help="A single-turn environment.")],
    model: Annotated[
        str, typer.Option(help="A local model directory, or 'tiny' (a small random model).")
    ],
    tasks: Annotated[int, typer.Option(help="Held-out tasks.", min=1, max=100_000)] = 64,
    k: Annotated[str, typer.Option("--k", help="The k of pass@k, comma-separated.")] = "1,8,32",
    option: Options = None,
    group_by: Annotated[
        str, typer.Option(help="The option whose values group the tasks ('' for none).")
    ] = "difficulty",
    threshold: Annotated[
        float, typer.Option(help="A sample is correct at this reward or more.", min=0.0)
    ] = 1.0,
    max_new_tokens: Annotated[int, typer.Option(help="Tokens per sample.", min=1)] = 64,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.", min=0.0)] = 1.0,
    device: Annotated[
        str | None, typer.Option(help="torch device.", show_default="cuda if present, else cpu")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of sampling and of the bootstrap.")] = 0,
    output_dir: Annotated[Path, typer.Option(help="Where passk.json and passk.png go.")] = Path(
        "eval"
    ),
    url: Url = DEFAULT_URL,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """pass@k of a model on held-out tasks of an environment: samples max(k) completions per
    task, scores them through the server, and reports pass@1 and pass@k (the unbiased
    estimator) per group with 95% bootstrap intervals over tasks, as text, JSON and a plot."""
    # torch and transformers load only for this command.
    import torch  # noqa: PLC0415

    from clients.passk import plot, save, table  # noqa: PLC0415
    from clients.train.evaluate import evaluate, held_out_tasks, parse_ks  # noqa: PLC0415
    from clients.train.generation import (  # noqa: PLC0415
        completions,
        default_device,
        dtype_for,
        load_policy,
    )

    try:
        ks = parse_ks(k)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--k") from None
    torch.manual_seed(seed)
    output_dir.mkdir(parents=True, exist_ok=True)
    where = torch.device(device or default_device())
    with reporting(), connect(url, api_key) as client:
        try:
            held_out = held_out_tasks(client, env, tasks, _parse_options(option), group_by or None)
        except ValueError as exc:
            fail(str(exc), EXIT_USAGE)
        try:
            policy, tokenizer = load_policy(model, output_dir, str(where))
        except OSError as exc:
            fail(f"cannot load the model {model!r}: {exc}", EXIT_USAGE)

        def generate(prompts: Sequence[Any], n: int) -> list[list[str]]:
            return completions(
                policy,
                tokenizer,
                prompts,
                n,
                temperature=temperature,
                max_new_tokens=max_new_tokens,
                device=where,
                dtype=dtype_for(where),
            )

        rows, results = evaluate(client, held_out, generate, ks, threshold=threshold, seed=seed)
    save(rows, results, output_dir / "passk.json")
    drawn = plot(rows, output_dir / "passk.png", title=f"{env}: {model}")
    if as_json:
        typer.echo((output_dir / "passk.json").read_text())
        return
    masked = sum(r.masked for r in results)
    typer.echo(f"{env}: {len(held_out)} held-out tasks, {max(ks)} samples each, {masked} unscored")
    for line in table(rows):
        typer.echo(line)
    typer.echo(f"plot: {drawn}")
