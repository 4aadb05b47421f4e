"""The README's curl examples work verbatim against a running server.

The only change made to the text is the address: the examples use localhost:8000 (what
``make serve`` binds), the test server listens on a free port.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from envserver.testing import ROOT, LiveServer

README = ROOT / "README.md"


def example_block() -> str:
    text = README.read_text()
    section = text[text.index("## Try it") :]
    match = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert match, "no sh block under '## Try it'"
    return match.group(1)


def test_readme_opens_with_the_two_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README.read_text(), re.DOTALL)
    assert first_block
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make serve", "make test"]


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_every_curl_example_works(live_server: LiveServer) -> None:
    script = example_block().replace("localhost:8000", f"127.0.0.1:{live_server.port}")
    assert script.count("curl ") >= 8
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    output = result.stdout
    assert "envserver.dev/problems" not in output, output  # no example answered with an error
    assert '"verifiers"' in output  # the catalogue
    assert '"reward":1.0' in output and '"reward":0.0' in output  # the verify batch
    assert '"task_id":"math@1/42?difficulty=easy&max_attempts=2"' in output  # reset
    assert '"terminated"' in output  # the step
    assert '"status":"ok"' in output and "envserver_items_total" in output  # operations
