"""The default sizing: server processes and pool workers chosen from the cores and the memory
unless set, said at start-up and in /readyz (``envserver.config.Machine``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from envserver.config import PROCESS_MIB, WORKER_MIB, Machine, Settings
from tests.conftest import make_server

PLENTY = 1 << 20  # MiB: memory that limits nothing


@pytest.mark.parametrize(
    ("cores", "processes", "workers"),
    [(1, 1, 2), (2, 2, 4), (4, 4, 8), (16, 16, 32)],
)
def test_a_process_per_core_and_two_workers_each_when_memory_allows(
    cores: int, processes: int, workers: int
) -> None:
    sized = Settings(server_processes=0, pool_workers=0).sized(Machine(cores, PLENTY))
    assert (sized.server_processes, sized.pool_workers) == (processes, workers)


def test_memory_bounds_processes_first_then_workers() -> None:
    machine = Machine(16, 8192)  # half of it: 4096 MiB for processes and workers
    sized = Settings(server_processes=0, pool_workers=0).sized(machine)
    assert sized.server_processes == 4096 // (PROCESS_MIB + 2 * WORKER_MIB) == 5
    used = sized.server_processes * PROCESS_MIB + sized.pool_workers * WORKER_MIB
    assert used <= 4096 < used + WORKER_MIB
    tiny = Settings(server_processes=0, pool_workers=0).sized(Machine(8, 512))
    assert (tiny.server_processes, tiny.pool_workers) == (1, 1)  # never below one of each


def test_what_is_set_is_kept_and_the_rest_follows_it() -> None:
    machine = Machine(16, PLENTY)
    assert Settings(server_processes=3, pool_workers=5).sized(machine).pool_workers == 5
    assert Settings(server_processes=3, pool_workers=0).sized(machine).pool_workers == 16
    assert Settings(server_processes=12, pool_workers=0).sized(machine).pool_workers == 24
    assert Settings(server_processes=0, pool_workers=7).sized(machine).server_processes == 16
    assert "as set" in Settings(server_processes=3, pool_workers=5).sizing(machine)
    said = Settings(server_processes=0, pool_workers=5).sizing(machine)
    assert said.startswith("16 cores, 1024.0 GiB: 16 server processes, 5 pool workers in all")
    assert "set ENVSERVER_SERVER_PROCESSES to choose" in said


def test_an_app_alone_is_one_process_with_the_machines_workers() -> None:
    """An app created in a process of its own (a test's, a Ray replica's) is one process:
    nothing splits its pool."""
    shared = Settings(server_processes=0, pool_workers=0).share()
    assert shared.server_processes == 1
    assert shared.pool_workers == Machine.here().pool_workers(1)


def test_the_machine_read_here_follows_the_cpu_affinity() -> None:
    code = "from envserver.config import Machine; print(Machine.here().cores)"
    one = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}),
    )
    assert one.stdout.strip() == "1"
    assert Machine.here().cores == len(os.sched_getaffinity(0))


def test_serve_states_its_sizing_at_start_and_in_readyz(tmp_path: Path) -> None:
    """Unset, the server sizes itself from the machine (here under an affinity of one core:
    one process, two workers), says so in one line as it starts and in /readyz."""
    server = make_server(tmp_path, ENVSERVER_LOG_LEVEL="info", ENVSERVER_SANDBOX_BACKEND="none")
    for name in ("ENVSERVER_SERVER_PROCESSES", "ENVSERVER_POOL_WORKERS"):
        server.env.pop(name)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # the server inherits it
    try:
        server.start()
    finally:
        os.sched_setaffinity(0, before)
    try:
        ready = httpx.get(f"{server.base_url}/readyz", timeout=30).json()
    finally:
        server.stop()
    assert ready["server_processes"] == 1 and ready["pool_workers_total"] == 2
    assert ready["pool_workers"] == 2  # this process's share: all of them
    assert ready["sizing"].startswith("1 core, ")
    lines = [line for line in server.log.read_text().splitlines() if "sizing: " in line]
    assert len(lines) == 1
    assert "1 server process, 2 pool workers in all, chosen from the machine" in lines[0]
