"""The README's examples work verbatim against a running server and return what it shows.

Each example under "Try it" is its commands followed by ``# → ...`` lines: what it returns, with
``…`` where the answer goes on. Every shown part must appear in the example's own output, in
order. The only change made to the text is the address: the examples use localhost:8000 (what
``make serve`` binds), the test server listens on a free port.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest

from tests.server import ROOT, LiveServer

README = ROOT / "README.md"
SHOWN = "# → "
MARK = "@@example {}@@"


@dataclass(frozen=True)
class Example:
    """Commands, and the parts of their output the README shows."""

    commands: str
    shown: tuple[str, ...]


def fenced_block(language: str, after: str) -> str:
    text = README.read_text()
    section = text[text.index(after) :]
    match = re.search(rf"```{language}\n(.*?)```", section, re.DOTALL)
    assert match, f"no {language} block under {after!r}"
    return match.group(1)


def examples() -> list[Example]:
    found: list[Example] = []
    commands: list[str] = []
    shown: list[str] = []
    for line in fenced_block("sh", "## Try it").splitlines():
        if line.startswith(SHOWN):
            shown.append(line.removeprefix(SHOWN))
            continue
        if shown:  # the first line after an example's output starts the next one
            found.append(Example("\n".join(commands), tuple(shown)))
            commands, shown = [], []
        if line.strip() and not line.startswith("#"):
            commands.append(line)
    if commands:
        found.append(Example("\n".join(commands), tuple(shown)))
    return found


def test_readme_opens_with_the_two_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README.read_text(), re.DOTALL)
    assert first_block
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    # Settings may precede a command (ENVSERVER_PORT=9000 make serve): still one of the two.
    bare = [re.sub(r"^(?:[A-Z_]+=\S+\s+)+", "", command) for command in commands]
    assert list(dict.fromkeys(bare)) == ["make serve", "make test"]


def test_every_example_shows_what_it_returns() -> None:
    found = examples()
    assert len(found) >= 10
    assert all(example.shown for example in found), [e.commands for e in found if not e.shown]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_every_curl_example_returns_what_it_shows(live_server: LiveServer) -> None:
    check_examples(examples(), live_server.port)


def check_examples(found: list[Example], port: int) -> None:
    """Run ``found`` against the server on ``port``; each must return what it shows."""
    script = "\n".join(
        f"echo '{MARK.format(index)}'\n{example.commands}" for index, example in enumerate(found)
    ).replace("localhost:8000", f"127.0.0.1:{port}")
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    outputs = re.split(r"@@example \d+@@\n", result.stdout)[1:]
    assert len(outputs) == len(found), result.stdout
    for example, output in zip(found, outputs, strict=True):
        assert "envserver.dev/problems" not in output, output  # no example answered an error
        position = 0
        for part in (p.strip() for line in example.shown for p in line.split("…")):
            if part:
                at = output.find(part, position)
                assert at >= 0, f"{example.commands}\nshows {part!r}, returned:\n{output}"
                position = at + len(part)


@pytest.mark.parametrize(
    "heading", ["## Clients", "### A stream of calls", "### MCP", "### OpenEnv"]
)
def test_the_python_examples_print_what_they_say(live_server: LiveServer, heading: str) -> None:
    code = fenced_block("python", heading).replace("http://127.0.0.1:8000", live_server.base_url)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    promised = re.search(r"# → (.*)", code)
    assert promised and result.stdout.strip() == promised.group(1)


@pytest.mark.timeout(280)
def test_the_trl_example_trains_the_tiny_model(live_server: LiveServer) -> None:
    pytest.importorskip("trl")
    code = fenced_block("python", "**TRL**").replace("http://127.0.0.1:8000", live_server.base_url)
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=260,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    promised = re.search(r"# → (.*)", code)
    assert promised and result.stdout.strip().splitlines()[-1] == promised.group(1)
