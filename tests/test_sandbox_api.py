"""The sandbox over HTTP: /v1/sandbox, runs, batches, matrices, SandboxFusion's /run_code
(driven by SandboxFusion's own client), and the code verifier through /v1/verify."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import sandbox_fusion

from environments.code.family import CodeTaskOptions, CodeTasks
from tests.conftest import make_server
from tests.process_support import descendants
from tests.server import LiveServer

HAS_GXX = shutil.which("g++") is not None
ADDER = "a, b = map(int, input().split())\nprint(a + b)"
STDIN_TESTS = {
    "kind": "stdin",
    "items": [{"stdin": "1 2", "stdout": "3"}, {"stdin": "20 22", "stdout": "42"}],
}


def _problem(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    detail: str = response.json()["detail"]
    return detail


def test_readiness_and_info_report_the_isolation_level(base_url: str) -> None:
    assert httpx.get(f"{base_url}/readyz").json()["sandbox"] == "full"
    info = httpx.get(f"{base_url}/v1/sandbox").json()
    assert info["isolation"] == "full" and info["workers"] >= 2
    assert {lang["name"] for lang in info["languages"]} >= {"python", "cpp", "bash"}


def test_run_and_batch(base_url: str) -> None:
    one = httpx.post(f"{base_url}/v1/sandbox/run", json={"source": ADDER, "stdin": "2 3"}).json()
    assert one["status"] == "ok" and one["stdout"] == "5\n" and one["isolation"] == "full"
    items = [{"source": f"print({i})"} for i in range(6)] + [{"source": "raise SystemExit(4)"}]
    reply = httpx.post(f"{base_url}/v1/sandbox/run/batch", json={"items": items}, timeout=30)
    results = reply.json()["results"]
    assert [r["stdout"] for r in results[:6]] == [f"{i}\n" for i in range(6)]
    assert results[6]["status"] == "runtime_error" and results[6]["exit_code"] == 4


def test_bad_input_gets_clear_errors(base_url: str) -> None:
    run = f"{base_url}/v1/sandbox/run"
    assert "cobol" in _problem(httpx.post(run, json={"source": "x", "language": "cobol"}), 422)
    _problem(httpx.post(run, json={"source": "x" * 1_000_001}), 422)
    _problem(httpx.post(run, json={"source": "x" * 17_000_000}), 413)
    garbage = {"content-type": "application/json"}
    _problem(httpx.post(run, content=b"\x00\xff\xfe garbage", headers=garbage), 400)
    _problem(httpx.post(run, content=b"print(1)", headers={"content-type": "text/plain"}), 415)
    _problem(httpx.post(run, json={"source": "x", "files": {"../../etc/passwd": ""}}), 422)
    _problem(httpx.post(run, json={"source": "x", "limits": {"wall_s": 10_000}}), 422)
    _problem(httpx.post(run, json={"source": "x", "surprise": 1}), 422)
    _problem(httpx.get(run), 405)
    binary = httpx.post(run, json={"source": "\x00\x01 \ufffd \udcff"[:5]})
    assert binary.status_code == 200 and binary.json()["status"] == "runtime_error"


def test_matrix(base_url: str) -> None:
    body = {
        "programs": [ADDER, "print(3)", "while True: pass"],
        "tests": STDIN_TESTS,
        "per_test_s": 0.5,
    }
    result = httpx.post(f"{base_url}/v1/sandbox/matrix", json=body, timeout=30).json()
    assert result["matrix"] == [[True, True], [True, False], [False, False]]
    assert result["cells"][2][0]["status"] == "timeout"
    assert result["isolation"] == "full"


def test_matrix_input_errors(base_url: str) -> None:
    url = f"{base_url}/v1/sandbox/matrix"
    call_without_entry = {"kind": "call", "items": [{"args": [1], "expected": 1}]}
    assert "entry_point" in _problem(
        httpx.post(url, json={"programs": ["x"], "tests": call_without_entry}), 422
    )
    _problem(httpx.post(url, json={"programs": [], "tests": STDIN_TESTS}), 422)
    _problem(httpx.post(url, json={"programs": ["x"] * 65, "tests": STDIN_TESTS}), 422)
    _problem(
        httpx.post(url, json={"programs": ["x"], "tests": {"kind": "stdin", "items": [{}]}}), 422
    )
    _problem(
        httpx.post(url, json={"programs": ["x"], "tests": {"kind": "fuzzy", "items": [{}]}}), 422
    )
    assert "need Python" in _problem(
        httpx.post(
            url,
            json={
                "language": "bash",
                "programs": ["x"],
                "tests": {"kind": "assert", "items": [{"code": "assert True"}]},
            },
        ),
        422,
    )


# --- SandboxFusion compatibility --------------------------------------------------------------


def _fusion(base_url: str, **fields: object) -> sandbox_fusion.RunCodeResponse:
    request = sandbox_fusion.RunCodeRequest(**fields)
    return sandbox_fusion.run_code(request, endpoint=base_url, max_attempts=1)


def test_sandbox_fusion_client_runs_code(base_url: str) -> None:
    ok = _fusion(base_url, code="print(input()[::-1])", stdin="abc", language="python")
    assert ok.status == sandbox_fusion.RunStatus.Success
    assert ok.run_result is not None and ok.run_result.stdout == "cba\n"
    assert ok.run_result.return_code == 0 and ok.compile_result is None
    failed = _fusion(base_url, code="import sys; sys.exit(3)", language="python")
    assert failed.status == sandbox_fusion.RunStatus.Failed
    assert failed.run_result is not None and failed.run_result.return_code == 3
    slow = _fusion(base_url, code="import time; time.sleep(5)", language="python", run_timeout=0.5)
    assert slow.run_result is not None
    assert slow.run_result.status == sandbox_fusion.CommandRunStatus.TimeLimitExceeded
    with pytest.raises(Exception, match="422"):
        _fusion(base_url, code="fmt.Println(1)", language="go")


@pytest.mark.skipif(not HAS_GXX, reason="g++ is not installed")
def test_sandbox_fusion_client_compiles_cpp(base_url: str) -> None:
    ok = _fusion(base_url, code='#include <cstdio>\nint main(){puts("hi");}', language="cpp")
    assert ok.status == sandbox_fusion.RunStatus.Success
    assert ok.compile_result is not None and ok.compile_result.return_code == 0
    assert ok.run_result is not None and ok.run_result.stdout == "hi\n"
    broken = _fusion(base_url, code="int main( {", language="cpp")
    assert broken.status == sandbox_fusion.RunStatus.Failed and broken.run_result is None
    assert broken.compile_result is not None and broken.compile_result.return_code != 0


def test_run_code_as_verl_sends_it(base_url: str) -> None:
    # verl's sandbox_fusion reward: one POST per test case, exactly these fields.
    body = {
        "compile_timeout": 10,
        "run_timeout": 10,
        "code": ADDER,
        "stdin": "20 22",
        "memory_limit_MB": 1024,
        "language": "python",
        "files": {},
        "fetch_files": [],
    }
    reply = httpx.post(f"{base_url}/run_code", json=body, timeout=30)
    assert reply.status_code == 200
    data = reply.json()
    assert set(data) >= {"status", "message", "compile_result", "run_result", "files"}
    assert data["status"] == "Success" and data["run_result"]["status"] == "Finished"
    assert data["run_result"]["stdout"].strip() == "42"
    hungry = httpx.post(
        f"{base_url}/run_code",
        json={**body, "code": "x = bytearray(2 << 30)", "memory_limit_MB": 256},
        timeout=30,
    ).json()
    assert hungry["status"] == "Failed" and hungry["run_result"]["return_code"] != 0


# --- the code verifier ------------------------------------------------------------------------


def _verify(
    base_url: str, response: str, reference: object, **options: object
) -> dict[str, object]:
    item: dict[str, object] = {"response": response, "reference": reference}
    if options:
        item["options"] = options
    reply = httpx.post(
        f"{base_url}/v1/verify", json={"verifier": "code", "items": [item]}, timeout=60
    )
    assert reply.status_code == 200, reply.text
    result: dict[str, object] = reply.json()["results"][0]
    return result


def test_code_verifier_over_http(base_url: str) -> None:
    reference = {"tests": STDIN_TESTS}
    right = _verify(base_url, f"Here you go:\n```python\n{ADDER}\n```", reference)
    assert right["status"] == "ok" and right["reward"] == 1.0
    half = _verify(base_url, "```python\nprint(3)\n```", reference)
    assert half["reward"] == 0.5
    assert half["components"] == {"pass_fraction": 0.5}
    assert half["metrics"] == {"passed": 1.0, "total": 2.0, "first_failure": 1.0}
    assert _verify(base_url, "```python\nprint(3)\n```", reference, reward="all")["reward"] == 0.0
    cheat = _verify(base_url, "```python\nimport os; os._exit(0)\n```", reference)
    assert cheat["status"] == "ok" and cheat["reward"] == 0.0
    broken = _verify(base_url, "```python\ndef f(:\n```", reference)
    assert broken["status"] == "invalid" and broken["reward"] == 0.0
    empty = _verify(base_url, "``` ```", reference)
    assert empty["status"] == "invalid"
    bad_reference = _verify(base_url, ADDER, {"tests": {"kind": "stdin", "items": []}})
    assert bad_reference["status"] == "error" and bad_reference["reward"] is None


def test_metrics_expose_the_sandbox_pool(base_url: str) -> None:
    httpx.post(f"{base_url}/v1/sandbox/run", json={"source": "print(1)"})
    text = httpx.get(f"{base_url}/metrics").text
    assert 'envserver_sandbox_workers{isolation="full"}' in text
    requests = next(
        line for line in text.splitlines() if line.startswith("envserver_sandbox_requests_total")
    )
    assert float(requests.split()[-1]) >= 1
    assert "envserver_sandbox_busy" in text and "envserver_sandbox_worker_restarts_total" in text


@pytest.mark.parametrize("fmt", ["stdin", "call", "assert"])
def test_code_environment_end_to_end(base_url: str, fmt: str) -> None:
    family = CodeTasks()
    expert = family.expert_response(family.generate(7, CodeTaskOptions(format=fmt)))
    reset = httpx.post(
        f"{base_url}/v1/envs/code/reset", json={"seed": 7, "options": {"format": fmt}}
    )
    assert reset.status_code == 200, reset.text
    episode = reset.json()
    step = httpx.post(
        f"{base_url}/v1/envs/code/step",
        json={"state": episode["state"], "action": expert},
        timeout=60,
    ).json()
    assert step["status"] == "ok" and step["reward"] == 1.0 and step["terminated"]
    wrong = httpx.post(
        f"{base_url}/v1/verify",
        json={"items": [{"task_id": episode["task_id"], "response": "```python\nprint(0)\n```"}]},
        timeout=60,
    ).json()["results"][0]
    assert wrong["status"] == "ok" and wrong["reward"] < 1.0


# --- limits, maxima and the pool's health (issue 14, items 2 and 3) -----------------------------


@pytest.fixture(scope="module")
def small_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own (its workers get killed): two sandbox workers, small maxima."""
    env = {
        "ENVSERVER_SANDBOX_WORKERS": "2",
        "ENVSERVER_SANDBOX_MAX_MEMORY_MB": "768",
        "ENVSERVER_SANDBOX_MAX_PROCESSES": "32",
        "ENVSERVER_SANDBOX_MAX_WALL_S": "20",
    }
    with make_server(tmp_path_factory.mktemp("small-server"), **env) as server:
        yield server


def test_info_reports_health_memory_cap_and_maxima(small_server: LiveServer) -> None:
    info = httpx.get(f"{small_server.base_url}/v1/sandbox").json()
    assert (info["workers"], info["alive"], info["healthy"]) == (2, 2, True)
    assert info["memory_cap"] in ("cgroup", "address-space")
    assert info["maximum_limits"]["memory_mb"] == 768
    assert info["maximum_limits"]["processes"] == 32
    assert info["default_limits"]["memory_mb"] == 768  # the 1 GiB default, lowered to fit
    assert info["default_limits"]["processes"] <= 32


def test_limits_above_the_maxima_are_refused_naming_them(small_server: LiveServer) -> None:
    url = small_server.base_url
    run = f"{url}/v1/sandbox/run"
    for limits, maximum in (
        ({"memory_mb": 1024}, "768"),
        ({"processes": 64}, "32"),
        ({"wall_s": 60}, "20"),
    ):
        detail = _problem(httpx.post(run, json={"source": "print(1)", "limits": limits}), 422)
        assert f"maximum of {maximum}" in detail, detail
    items = [{"source": "print(1)"}, {"source": "print(2)", "limits": {"memory_mb": 4096}}]
    _problem(httpx.post(f"{run}/batch", json={"items": items}), 422)
    matrix = {"programs": ["print(3)"], "tests": STDIN_TESTS, "limits": {"processes": 100}}
    assert "maximum of 32" in _problem(httpx.post(f"{url}/v1/sandbox/matrix", json=matrix), 422)
    fine = httpx.post(run, json={"source": "print(1)", "limits": {"memory_mb": 512}}).json()
    assert fine["status"] == "ok"
    # SandboxFusion's "no limit" is the maximum; an explicit limit above it is refused.
    unlimited = {"code": "print(5)", "language": "python", "memory_limit_MB": -1}
    assert httpx.post(f"{url}/run_code", json=unlimited).json()["status"] == "Success"
    _problem(httpx.post(f"{url}/run_code", json={**unlimited, "memory_limit_MB": 4096}), 422)
    # The code verifier: a reference asking for more is an error, never a 0.
    reference = {"tests": STDIN_TESTS, "memory_mb": 4096}
    result = _verify(url, f"```python\n{ADDER}\n```", reference)
    assert result["status"] == "error" and result["reward"] is None
    assert "maximum of 768" in str(result["detail"])


def _sandbox_workers(server: LiveServer) -> list[int]:
    """Pids of the server's sandbox workers proper (full isolation: the re-executed zygotes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"sandbox.zygote" in cmdline and b"--inner" in cmdline:
            found.append(int(entry.name))
    assert server.process is not None
    mine = descendants(server.process.pid)
    return [pid for pid in found if pid in mine]


def test_killing_a_sandbox_worker_under_load_heals_and_is_reported(
    small_server: LiveServer,
) -> None:
    url = small_server.base_url
    workers = _sandbox_workers(small_server)
    assert len(workers) == 2, workers
    items = [{"source": f"import time\ntime.sleep(0.05)\nprint({i})"} for i in range(60)]
    with ThreadPoolExecutor(1) as background:
        batch = background.submit(
            httpx.post, f"{url}/v1/sandbox/run/batch", json={"items": items}, timeout=120
        )
        time.sleep(1.0)
        os.kill(workers[0], signal.SIGKILL)
        results = batch.result().json()["results"]
    statuses = [r["status"] for r in results]
    assert set(statuses) <= {"ok", "sandbox_error"} and statuses.count("sandbox_error") <= 1
    deadline = time.monotonic() + 15
    while httpx.get(f"{url}/v1/sandbox").json()["alive"] != 2:
        assert time.monotonic() < deadline, "the sandbox pool did not heal"
        time.sleep(0.1)
    fresh = _sandbox_workers(small_server)
    assert len(fresh) == 2 and workers[0] not in fresh
    assert "envserver_sandbox_workers_alive 2.0" in httpx.get(f"{url}/metrics").text
