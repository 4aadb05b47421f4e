"""The ``envserver`` command line against a real server."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from envserver.cli import app, main, tool_families
from envserver.wire import Catalogue, EnvInfo, ResetResponse, StepResponse, VerifyResponse
from tests.conftest import make_server
from tests.math_support import expert_answer
from tests.server import ROOT, LiveServer, free_port

SECRET = "cli-test-secret-key"
WRONG = "The answer is $\\boxed{-987654321}$."
COMMANDS = ("serve", "audit", "envs", "reset", "step", "verify", "reverify", "eval")
FAMILY_TOOLS = ("alfworld", "opt", "sbol", "tamarin", "webshop")


def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Result:
    """Invoke the CLI in-process, as the shell would."""
    return CliRunner().invoke(app, list(args), input=stdin, env=env)


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A keyed server started with ``serve --host --port``; ENVSERVER_HOST/PORT point elsewhere,
    so it answers on ``base_url`` only if the options override them."""
    server = make_server(
        tmp_path_factory.mktemp("keyed"),
        ENVSERVER_API_KEYS=SECRET,
        ENVSERVER_HOST="127.0.0.2",
        ENVSERVER_PORT=str(free_port()),
    )
    command = [sys.executable, "-m", "envserver.cli", "serve", "--host", "127.0.0.1"]
    with server.log.open("ab") as log:
        server.process = subprocess.Popen(
            [*command, "--port", str(server.port)],
            cwd=ROOT,
            env=server.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield server.wait_ready()
    finally:
        server.stop()


# --- help and entry points ------------------------------------------------------------------------


@pytest.mark.parametrize("command", [(), *((c,) for c in COMMANDS)])
def test_help(command: tuple[str, ...]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.stdout
    if command and command[0] != "serve":
        assert "--url" in result.stdout and "--json" in result.stdout
    assert "``" not in result.stdout  # reStructuredText from a docstring, printed as is


@pytest.mark.parametrize("command", COMMANDS)
def test_help_at_80_columns_shows_every_default_whole_and_no_type_after_a_flag(
    command: str,
) -> None:
    import typer.main

    result = run(command, "--help", env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout and "…" not in result.stdout, result.stdout
    text = " ".join(result.stdout.split())  # a default may wrap, never be cut
    for param in typer.main.get_command(app).commands[command].params:
        if isinstance(param.show_default, str):
            assert f"default: ({param.show_default})" in text, (param.name, text)


def test_entry_points() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = scripts["envserver"].partition(":")
    assert getattr(__import__(module, fromlist=[function]), function) is main
    done = subprocess.run(
        [sys.executable, "-m", "envserver.cli", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert all(command in done.stdout for command in COMMANDS)


@pytest.mark.parametrize("family", FAMILY_TOOLS)
def test_a_familys_tools_are_subcommands(family: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "envserver.cli", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert family in done.stdout
    tools = subprocess.run(
        [sys.executable, "-m", "envserver.cli", family, "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert tools.returncode == 0, tools.stderr
    assert "Commands" in tools.stdout and f"envserver {family}" in tools.stdout
    assert "``" not in tools.stdout


def test_family_tools_are_found_by_name_and_loaded_only_when_they_run() -> None:
    assert set(tool_families()) == set(FAMILY_TOOLS)
    # Importing the command looks at no folder and loads no family, and neither does a client
    # command's help.
    program = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from envserver.cli import app, tool_families\n"
        "assert tool_families.cache_info().currsize == 0\n"
        "assert CliRunner().invoke(app, ['envs', '--help']).exit_code == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('environments.', 'fastapi'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_an_unknown_command_is_a_usage_error() -> None:
    result = run("nosuchfamily", "--help")
    assert result.exit_code == 2 and "No such command" in result.output


def test_the_clients_readme_lists_every_command() -> None:
    text = (ROOT / "clients" / "README.md").read_text()
    block = text.split("## CLI", 1)[1].split("```", 2)[1]
    lines = re.findall(r"^envserver (\S+)(?: ([a-z][a-z-]*))?", block, re.MULTILINE)
    assert {first for first, _ in lines} == set(COMMANDS) | set(FAMILY_TOOLS)
    for family in FAMILY_TOOLS:  # each family's own commands, every one of them
        assert {second for first, second in lines if first == family} == set(_subcommands(family))


def _subcommands(family: str) -> list[str]:
    import importlib

    import typer.main

    group = typer.main.get_command(importlib.import_module(f"environments.{family}.cli").app)
    return list(getattr(group, "commands", {}))


def test_every_family_tool_option_says_what_it_does_and_its_default() -> None:
    import importlib

    import typer.main

    for family in FAMILY_TOOLS:
        group = typer.main.get_command(importlib.import_module(f"environments.{family}.cli").app)
        stack = [(family, group)]
        while stack:
            name, command = stack.pop()
            stack += [(f"{name} {n}", c) for n, c in getattr(command, "commands", {}).items()]
            ctx = command.context_class(command, info_name=name)
            assert command.help, name
            for param in command.params:
                if param.param_type_name != "option" or param.name == "help":
                    continue
                record = param.get_help_record(ctx)
                assert record is not None and param.help, (name, param.name)
                assert "default:" in record[1] or param.required, (name, param.name, record)


# --- commands -----------------------------------------------------------------------------------


def test_envs(base_url: str) -> None:
    human = run("envs", "--url", base_url)
    assert human.exit_code == 0, human.output
    assert "math@1" in human.stdout and "test.sleep@1" in human.stdout
    catalogue = Catalogue.model_validate_json(run("envs", "--url", base_url, "--json").stdout)
    assert "math" in [env.id for env in catalogue.envs]
    spec = EnvInfo.model_validate_json(run("envs", "math", "--url", base_url, "--json").stdout)
    assert spec.id == "math"
    one = run("envs", "math", "--url", base_url)
    assert "difficulty" in one.stdout and "max_attempts" in one.stdout


def test_reset_then_step(base_url: str) -> None:
    result = run("reset", "math", "--seed", "7", "-o", "difficulty=easy", "--url", base_url)
    assert result.exit_code == 0, result.output
    assert "task_id: math@1/7?difficulty=easy" in result.stdout
    assert "\\boxed" in result.stdout

    as_json = run(
        "reset", "math", "--seed", "7", "-o", "difficulty=easy", "--json", "--url", base_url
    )
    episode = ResetResponse.model_validate_json(as_json.stdout)
    assert episode.task_id == "math@1/7?difficulty=easy"
    state, answer = str(episode.state), expert_answer(str(episode.task_id))
    assert f"state: {state}" in result.stdout  # same seed, same token: copy-pasteable

    stepped = run("step", "math", state, answer, "--json", "--url", base_url)
    assert stepped.exit_code == 0, stepped.output
    step = StepResponse.model_validate_json(stepped.stdout)
    assert (step.reward, step.terminated) == (1.0, True)

    from_stdin = run("step", "math", state, "-", "--url", base_url, stdin=WRONG + "\n")
    assert from_stdin.exit_code == 0, from_stdin.output
    assert from_stdin.stdout.startswith("reward: 0  status: ok  terminated")

    replay = run("reset", "math", "--task-id", str(episode.task_id), "--json", "--url", base_url)
    assert ResetResponse.model_validate_json(replay.stdout).observation == episode.observation


def test_verify(base_url: str) -> None:
    result = run(
        "verify",
        "--verifier",
        "math",
        "--reference",
        "0.5",
        "\\boxed{1/2}",
        "none",
        "--url",
        base_url,
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("1\tok")
    assert lines[1].startswith("0\tinvalid")

    task_id = "math@1/8?difficulty=hard"
    by_task = run(
        "verify",
        "--task-id",
        task_id,
        "-",
        "--json",
        "--url",
        base_url,
        stdin=expert_answer(task_id),
    )
    assert by_task.exit_code == 0, by_task.output
    assert VerifyResponse.model_validate_json(by_task.stdout).results[0].reward == 1.0

    structured = run(
        "verify",
        *("--verifier", "math", "--reference-json", '"\\\\frac{3}{4}"', "0.75"),
        *("-o", "extraction=auto", "--json", "--url", base_url),
    )
    assert VerifyResponse.model_validate_json(structured.stdout).results[0].reward == 1.0


def test_url_comes_from_the_environment(base_url: str) -> None:
    result = run("envs", "--json", env={"ENVSERVER_URL": base_url})
    assert result.exit_code == 0, result.output
    assert Catalogue.model_validate_json(result.stdout).envs


# --- failures -----------------------------------------------------------------------------------


def test_server_errors_exit_1_with_the_detail_on_stderr(base_url: str) -> None:
    unknown = run("envs", "no-such-env", "--url", base_url)
    assert unknown.exit_code == 1
    assert "unknown environment 'no-such-env'" in unknown.stderr
    assert unknown.stdout == ""
    bad_option = run("reset", "math", "-o", "difficulty=impossible", "--url", base_url)
    assert bad_option.exit_code == 1
    assert "HTTP 422" in bad_option.stderr and "difficulty" in bad_option.stderr
    forged = run("step", "math", "est1.AAAA.AAAA", "x", "--url", base_url)
    assert forged.exit_code == 1
    assert "HTTP 40" in forged.stderr


def test_a_url_ending_in_v1_is_told_to_name_the_servers_root(base_url: str) -> None:
    result = run("envs", "--url", f"{base_url}/v1")
    assert result.exit_code == 1
    assert "the server has no /v1/v1/envs" in result.stderr
    assert "the URL must be the server's root, without /v1" in result.stderr
    unknown = run("envs", "no-such-env", "--url", base_url)  # a real 404 keeps its own words
    assert "without /v1" not in unknown.stderr


def test_unreachable_server_exits_1() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = run("envs", "--url", url)
    assert result.exit_code == 1
    # Where it looked: the URL, not only the path.
    assert f"error: GET {url}/v1/envs: gave up after 3 attempts" in result.stderr


def test_unscored_items_exit_3(base_url: str) -> None:
    result = run("verify", "--verifier", "test.raise", "--reference", "x", "x", "--url", base_url)
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith("-\terror")


def test_prove_reports_a_failed_reset_in_one_line(tmp_path_factory: pytest.TempPathFactory) -> None:
    # A recording that names its root node but lost it: the server's reset answers `error`
    # (no state). `prove` says why on one line and exits non-zero, with no traceback.
    recordings = tmp_path_factory.mktemp("broken-recording")
    source = (ROOT / "environments/tamarin/theories/challenge_response.spthy").read_text()
    tree = {
        "theory": "ChallengeResponse",
        "source": source,  # the shipped text: the replay serves a recording of this very text
        "nodes": {},
        "lemmas": {"key_secrecy": {"root": "0123456789ab"}},
    }
    (recordings / "challenge_response_tree.json").write_text(json.dumps(tree))
    server = make_server(
        tmp_path_factory.mktemp("broken-server"),
        ENVSERVER_TAMARIN_BACKEND="replay",
        ENVSERVER_TAMARIN_RECORDINGS=str(recordings),
    )
    with server:
        result = run(
            "tamarin",
            "prove",
            "--theory",
            "challenge_response",
            "--budget",
            "2",
            "--url",
            server.base_url,
        )
    assert result.exit_code == 3, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: the reset failed (error): ")
    assert "names node 0123456789ab but does not hold it" in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ("verify", "--task-id", "math@1/1", "--reference", "1", "x"),
        ("verify", "--reference", "1", "x"),
        ("verify", "--verifier", "math", "--reference-json", "{oops", "x"),
        ("verify", "--verifier", "math", "--reference", "1", "-", "-"),
        ("reset", "math", "-o", "no-equals-sign"),
        ("reset", "math", "--seed", "-1"),
        ("step", "math"),
    ],
)
def test_usage_errors_exit_2(args: tuple[str, ...]) -> None:
    # No server is needed: these fail before any request (the URL points nowhere).
    result = run(*args, "--url", f"http://127.0.0.1:{free_port()}")
    assert result.exit_code == 2, result.output


def test_serve_workers_are_not_ray_replicas() -> None:
    result = run("serve", "--ray", "--workers", "2")
    assert result.exit_code == 2, result.output
    assert "--replicas" in result.output


def test_api_key_and_serve_overrides(keyed_server: LiveServer) -> None:
    url = keyed_server.base_url
    anonymous = run("envs", "--url", url)
    assert anonymous.exit_code == 1
    assert "HTTP 401" in anonymous.stderr and "missing bearer API key" in anonymous.stderr
    keyed = run("envs", "--url", url, "--api-key", SECRET)
    assert keyed.exit_code == 0, keyed.output
    from_env = run("envs", "--url", url, env={"ENVSERVER_API_KEY": SECRET})
    assert from_env.exit_code == 0, from_env.output
    wrong = run("envs", "--url", url, "--api-key", "not-the-key")
    assert (wrong.exit_code, "invalid API key" in wrong.stderr) == (1, True)


# --- polish: help texts, defaults, configuration errors ---------------------------------------


def test_every_option_says_what_it_does_and_its_default() -> None:
    import typer.main

    group = typer.main.get_command(app)
    commands = group.commands
    assert set(commands) >= set(COMMANDS)
    for name, command in commands.items():
        ctx = command.context_class(command, info_name=name)
        for param in command.params:
            if param.param_type_name != "option" or param.name == "help":
                continue
            record = param.get_help_record(ctx)
            assert record is not None and param.help, (name, param.name)
            assert "default:" in record[1] or param.required, (name, param.name, record)


def test_every_train_option_says_what_it_does_and_its_default() -> None:
    pytest.importorskip("torch")
    from clients.train.cli import _parser

    parser = _parser()
    formatter = parser._get_formatter()
    for action in parser._actions:
        if action.dest == "help":
            continue
        text = formatter._get_help_string(action) or ""
        assert action.help, action.dest
        assert "(default:" in text or "(required)" in text, (action.dest, text)


def _serve(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envserver.cli", "serve"],
        cwd=ROOT,
        env={
            **os.environ,
            "ENVSERVER_LOG_LEVEL": "warning",
            "ENVSERVER_PORT": str(free_port()),  # should it start after all
            **env,
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ENVSERVER_SECRET": "short"}, "error: ENVSERVER_SECRET must be at least 16 characters"),
        ({"ENVSERVER_PORT": "eighty"}, "error: ENVSERVER_PORT: Input should be a valid integer"),
        ({"ENVSERVER_SANDBOX_BACKEND": "vm"}, "error: ENVSERVER_SANDBOX_BACKEND: Input should be"),
        # A family's own setting (docs/architecture.md: "one line naming it").
        ({"ENVSERVER_EVO_PASS_BAND": "0.9,0.1"}, "error: ENVSERVER_EVO_PASS_BAND: the pass band"),
        (
            {"ENVSERVER_EVO_SOLVER_SAMPLES": "0"},
            "error: ENVSERVER_EVO_SOLVER_SAMPLES: Input should",
        ),
    ],
)
def test_a_bad_setting_is_one_error_line(env: dict[str, str], message: str) -> None:
    done = _serve(**env)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(message), done.stderr


def test_a_busy_port_stops_the_start_before_anything_starts_and_names_its_holder() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = _serve(ENVSERVER_PORT=str(port))
    assert done.returncode == 2, done.stderr
    # One line, before the server started anything (no sandbox, pool or uvicorn output).
    assert done.stderr.splitlines() == [
        f"error: 127.0.0.1:{port} is in use by pid {os.getpid()} ({_command_line()}): stop it, "
        "or serve on another port (--port or ENVSERVER_PORT)"
    ]


def _command_line() -> str:
    own = Path(f"/proc/{os.getpid()}/cmdline").read_bytes()
    return own.replace(b"\0", b" ").strip().decode(errors="replace")[:160]
