"""The ``envserver`` command: the server's own commands, with the HTTP client's mounted beside.

    envserver serve --port 8000
    envserver audit [--url URL] [--env ID]     (the families' red-team suites)
    envserver FAMILY ...                       (a family's tools: its declaration's ``tools``)
    envserver envs | reset | step | verify     (talk to a server: clients.cli)

This is the one module of the server that imports ``clients/``: the command line is where the
two sides meet. A family's tools are found by name when a command names them (or when the help
lists them), never at import, and the family loads only when its tools run: a family imports its
heavy dependencies, which the other commands never need.

Exit codes are the client's (``clients.cli``), and 4 when a red-team case of ``audit`` failed.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import ValidationError
from typer.core import TyperCommand, TyperGroup

from clients import cli as client_cli
from clients.cli import (
    EXIT_USAGE,
    ApiKey,
    JsonOutput,
    connect,
    fail,
    first_sentence,
    number,
    reporting,
)

if TYPE_CHECKING:
    # Typer carries its own copy of click, and names its types only there.
    from typer._click.core import Command, Context

    from environments.family import Family
    from envserver.config import Settings
    from envserver.redteam import CaseResult, Suite

EXIT_AUDIT_FAILED = 4


@cache
def tool_families() -> dict[str, str]:
    """The module of each installed family's tools, by family name: read from the families'
    declarations (``envserver.families``), which load no family."""
    from envserver.families import declared  # noqa: PLC0415  (only for a family's command)

    return {family.name: family.tools for family in declared() if family.tools is not None}


class FamilyTools(TyperCommand):
    """A family's tools as a command of ``envserver``: its own Typer app, imported and run with
    the rest of the command line only when invoked."""

    def __init__(self, family: str, module: str) -> None:
        self.module = module
        super().__init__(
            family,
            help=f"The {family} family's own tools: envserver {family} --help.",
            context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
            add_help_option=False,
        )

    def invoke(self, ctx: Context) -> Any:
        tools = importlib.import_module(self.module)
        return tools.app(args=ctx.args, prog_name=ctx.command_path)


class WithFamilyTools(TyperGroup):
    """The commands defined here, and one per family that brings tools."""

    def list_commands(self, ctx: Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *tool_families()})

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        found = super().get_command(ctx, cmd_name)
        if found is None and cmd_name in tool_families():
            return FamilyTools(cmd_name, tool_families()[cmd_name])
        return found


app = typer.Typer(
    name="envserver",
    cls=WithFamilyTools,
    help="A stateless reward service for RL with verifiable rewards: serve it, call it, audit "
    "it, or run a family's tools.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Click's plain help: rich's tables cut long defaults short at 80 columns and print a type
    # after every flag ("--json <bool>").
    rich_markup_mode=None,
)
app.registered_commands += client_cli.app.registered_commands


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
            show_default="ENVSERVER_SERVER_PROCESSES, else one per core (within the memory)",
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
    deploy it to a Ray cluster (see envserver.ray_serve). A setting that cannot be used is
    reported on one line, and the exit code is 2."""
    # The server's dependencies load only here, so the client commands stay light.
    from envserver.app import run  # noqa: PLC0415
    from envserver.config import ConfigError, Settings  # noqa: PLC0415

    if ray and workers is not None:
        # A Ray replica is one server process; Serve scales them.
        fail("--workers is for a server on this machine; with --ray use --replicas", EXIT_USAGE)
    overrides: dict[str, Any] = {}
    if host is not None:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = port
    if workers is not None:
        overrides["server_processes"] = workers
    try:
        settings = Settings(**overrides)
        if ray:
            _deploy_on_ray(settings, ray_address, replicas, max_replicas or replicas)
        else:
            _preflight(settings)
            run(settings)
    except ValidationError as exc:
        fail(str(ConfigError.of(exc)), EXIT_USAGE)
    except ConfigError as exc:
        fail(str(exc), EXIT_USAGE)


def _preflight(settings: Settings) -> None:
    """What would stop the server once started, checked before it starts anything: the port
    it listens on, then every family's settings (its ``ENVSERVER_<FAMILY>_*`` variables)."""
    from envserver.config import family_settings  # noqa: PLC0415
    from envserver.ports import check_port  # noqa: PLC0415
    from envserver.registry import discover  # noqa: PLC0415

    check_port(settings.host, settings.port)
    for extension in discover(settings.plugins).extensions.values():
        family_settings(extension.settings_model, settings.data_dir)


def _deploy_on_ray(settings: Settings, address: str, replicas: int, max_replicas: int) -> None:
    try:
        from envserver.ray_serve import Scaling, deploy  # noqa: PLC0415
    except ImportError as exc:
        fail(f"--ray needs the ray extra ({exc}): pip install 'envserver[ray]'", EXIT_USAGE)
    if max_replicas < replicas:
        fail("--max-replicas must be at least --replicas", EXIT_USAGE)
    url = deploy(address, Scaling(min_replicas=replicas, max_replicas=max_replicas), settings)
    typer.echo(f"envserver is served by Ray Serve at {url} (stop it with: serve shutdown)")


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
    search: Annotated[
        bool,
        typer.Option(
            "--search",
            help="Search instead of listing: mutate answers that earn reward with each family's "
            "moves and report every mutant paid more than it deserves (envserver/search.py).",
            show_default="off",
        ),
    ] = False,
    budget_s: Annotated[
        float,
        typer.Option("--budget-s", help="With --search: seconds per family.", min=0.1),
    ] = 30.0,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="With --search: the search's random seed, to replay a finding.",
            show_default="a fresh one, printed",
            min=0,
        ),
    ] = None,
    api_key: ApiKey = None,
    as_json: JsonOutput = False,
) -> None:
    """Run the families' red-team suites (redteam.toml): hacks that must not earn reward and
    equivalent answers that must keep it. Prints a table per family; exit code 4 if any case
    fails, 2 if a suite is malformed. Cases a server cannot serve (disabled) are skipped.
    With --search, run the searching adversary instead: exit code 4 if any mutant is paid more
    than it deserves, or a wrong answer dodges its 0 by running out of time."""
    from envserver import redteam  # noqa: PLC0415

    modules = [name.strip() for name in plugins.split(",") if name.strip()]
    if search:
        _audit_search(
            modules,
            family=env_id,
            url=url,
            api_key=api_key,
            budget_s=budget_s,
            seed=seed,
            as_json=as_json,
        )
        return
    from environments.family import FamilyError  # noqa: PLC0415
    from envserver.families import declared  # noqa: PLC0415

    try:
        families = declared(modules)
        suites, without = redteam.load_suites(families)
    except (redteam.SuiteError, FamilyError) as exc:
        fail(str(exc), EXIT_USAGE)
    chosen = redteam.select(suites, env_id, families)
    if env_id is not None and not chosen:
        fail(f"no red-team suite has cases for {env_id!r}", EXIT_USAGE)
    if url is None:
        from envserver.config import Settings  # noqa: PLC0415  (the server's side: only here)
        from envserver.registry import discover  # noqa: PLC0415

        # Opened as a server opens it, so families with resources (a store) serve their cases.
        with discover(modules).opened(Settings()) as registry:
            results = redteam.run(redteam.InProcess(registry), chosen)
    else:
        from clients.audit import OverHttp  # noqa: PLC0415

        with reporting(), connect(url, api_key) as client:
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


def _audit_search(
    modules: Sequence[str],
    *,
    family: str | None,
    url: str | None,
    api_key: str | None,
    budget_s: float,
    seed: int | None,
    as_json: bool,
) -> None:
    import secrets  # noqa: PLC0415

    from envserver import redteam  # noqa: PLC0415
    from envserver.search import search  # noqa: PLC0415

    if seed is None:
        seed = secrets.randbelow(2**32)
    from envserver.config import Settings  # noqa: PLC0415  (the server's side: only here)
    from envserver.registry import discover  # noqa: PLC0415

    with discover(modules).opened(Settings()) as registry:
        chosen = registry.searches
        if family is not None:
            chosen = {name: space for name, space in chosen.items() if name == family}
            if not chosen:
                fail(f"no family named {family!r} declares a search", EXIT_USAGE)
        limits = {name: check.timeout_s for name, check in registry.verifiers.items()}
        limits |= {env_id: env.spec.timeout_s for env_id, env in registry.envs.items()}
        if url is None:
            target: redteam.Target = redteam.InProcess(registry)
            reports = [
                search(name, space, target, budget_s=budget_s, seed=seed, time_limit_s=limits)
                for name, space in chosen.items()
            ]
        else:
            from clients.audit import OverHttp  # noqa: PLC0415

            with reporting(), connect(url, api_key) as client:
                target = OverHttp(client)
                reports = [
                    search(name, space, target, budget_s=budget_s, seed=seed)
                    for name, space in chosen.items()
                ]
    if as_json:
        typer.echo(json.dumps({"seed": seed, "families": [r.as_json() for r in reports]}, indent=2))
    else:
        typer.echo(f"search seed {seed} ({budget_s:g} s per family; replay with --seed {seed})")
        typer.echo(f"  {'family':<16} {'tried':>7} {'paid':>5} {'dodged':>6} {'refused':>7} time")
        for r in reports:
            typer.echo(
                f"  {r.family:<16} {r.tried.total():>7} {r.paid.total():>5} "
                f"{r.dodged.total():>6} {r.refused.total():>7} {r.seconds:.1f} s"
            )
            if r.unscored or r.misjudged:
                typer.echo(
                    f"    {r.unscored.total()} could not be scored, the judge raised on "
                    f"{r.misjudged.total()}: " + "; ".join(r.errors[:3])
                )
            for finding in r.examples:
                probe = finding.probe
                shown = probe.response if probe.env is None else probe.actions
                typer.echo(
                    f"    {finding.kind} ({finding.move}): {finding.got.reward} > "
                    f"{finding.deserves:g} on {probe.target} by {probe.origin}: {shown!r:.200}"
                )
    if any(r.failed for r in reports):
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
            got = "-" if r.got is None else f"{r.got.status} {number(r.got.reward)}"
            line = f"  {r.case.name[:44]:<44} {r.case.expect:<10} {got:<16} {r.verdict}"
            typer.echo(line + (f": {first_sentence(r.detail)}" if r.verdict != "pass" else ""))
    for family in missing:
        typer.echo(f"{family.name}: no red-team suite (expected at {family.suite})")
    failed = sum(r.verdict == "fail" for r in results)
    typer.echo(f"{len(results)} cases: {failed} failed")


def main() -> None:
    """The ``envserver`` console script."""
    app(prog_name="envserver")


if __name__ == "__main__":
    main()
