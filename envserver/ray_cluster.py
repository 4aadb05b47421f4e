"""A one-node Ray cluster on loopback with envserver deployed on it by ``envserver serve --ray``,
for the Ray Serve tests and benchmark (the ``ray`` extra, and psutil, which the tests install).

Ray replaces ``--node-ip-address 127.0.0.1`` with the machine's routable address unless it is told
the cluster is single-node (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``, which makes Ray use loopback
for the node's address): with it every Ray server here listens on 127.0.0.1 and all traffic stays
on loopback. The cluster's processes are the descendants of one ``ray start --block``; ``stop``
ends exactly those (never ``ray stop``, which ends every Ray process of the machine).

Nothing of the machine's Ray state reaches the cluster: it has a home of its own (Ray reads
``~/.ray``; with another cluster's auth token there, ``ray status`` never reached this one and
``start`` gave up) and its own temporary directory, and the variables that point Ray at another
cluster or its credentials (``ISOLATED``) are not passed on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

import httpx
import psutil

from envserver.testing import SOURCE, free_port

SINGLE_NODE = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
PATIENT_PROXY = {"RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "30"}
"""Serve kills an HTTP proxy not ready within 5 s and starts another; on a node as busy as a
2-core machine running the test suite, the first one often needs longer. The caller's own
value wins."""
HIGH_THROUGHPUT = {"RAY_SERVE_THROUGHPUT_OPTIMIZED": "1", "RAY_SERVE_ENABLE_HA_PROXY": "1"}
"""Serve's high-throughput mode (Ray 2.56+): HAProxy (a C load balancer shipped with
``ray[serve]``) as each node's ingress instead of Serve's Python proxy, and the replicas' data
plane over direct gRPC. Read by Serve's own processes, so it is set where the cluster starts.
Not for tests: Ray 2.60 binds HAProxy's stats and metrics ports and each replica's gRPC port on
every interface, with no setting to keep them on loopback."""
ISOLATED = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
"""The caller's variables that would send Ray to another cluster or hand it another's token."""
REPLICA_TITLE = "ServeReplica:envserver:EnvServer"
"""What Ray names a replica's process (``ray::ServeReplica:<app>:<deployment>``)."""


class RayCluster:
    """``ray start --head`` on a free loopback port with ``cpus`` logical CPUs, in a temporary
    directory, in Serve's default mode or its ``high_throughput`` one; ``deploy`` puts envserver
    on it. Output goes to ``<workdir>/ray.log``."""

    def __init__(self, workdir: Path, cpus: int = 2, *, high_throughput: bool = False) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.workdir = workdir
        self.home = workdir / "home"
        self.home.mkdir(exist_ok=True)
        # Unix socket paths are limited to 107 bytes: Ray's live under a short temporary root.
        self.temp_dir = Path(tempfile.mkdtemp(prefix="ray-"))
        self.cpus = cpus
        self.gcs_port = free_port()
        self.address = f"127.0.0.1:{self.gcs_port}"
        # Serve's proxies take their port once, when Serve starts: every deploy uses this one.
        self.http_port = free_port()
        self.log = workdir / "ray.log"
        self.env = {
            **PATIENT_PROXY,
            **{name: value for name, value in os.environ.items() if name not in ISOLATED},
            **SINGLE_NODE,
            **(HIGH_THROUGHPUT if high_throughput else {}),
            "HOME": str(self.home),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SOURCE), os.getenv("PYTHONPATH")])),
        }
        self.head: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    def start(self, timeout_s: float = 120) -> RayCluster:
        """Start the head node and wait until it accepts clients; raises RuntimeError (with the
        log) when it does not."""
        ray = str(Path(sys.executable).with_name("ray"))
        with self.log.open("ab") as log:
            self.head = subprocess.Popen(  # noqa: S603 - the venv's own ray
                [
                    ray,
                    "start",
                    "--head",
                    "--block",
                    "--node-ip-address",
                    "127.0.0.1",
                    "--port",
                    str(self.gcs_port),
                    "--num-cpus",
                    str(self.cpus),
                    "--include-dashboard=false",
                    "--dashboard-host",
                    "127.0.0.1",
                    "--ray-client-server-port",
                    str(free_port()),
                    "--temp-dir",
                    str(self.temp_dir),
                    "--disable-usage-stats",
                ],
                cwd=SOURCE,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.head.poll() is not None:
                raise RuntimeError(f"ray start exited:\n{self.log.read_text()}")
            status = subprocess.run(  # noqa: S603 - the venv's own ray
                [ray, "status", "--address", self.address],
                env=self.env,
                capture_output=True,
                check=False,
            )
            if status.returncode == 0:
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the Ray head did not start:\n{self.log.read_text()}")

    def deploy(self, secret: str, replicas: int = 2, timeout_s: float = 300, **env: str) -> str:
        """``envserver serve --ray`` with ``replicas`` replicas, Serve's proxy on a free loopback
        port; returns its URL once every replica is ready. Raises RuntimeError with the output
        when the deployment fails. Deploying again changes the replica count in place."""
        port = self.http_port
        variables = {
            "ENVSERVER_SECRET": secret,
            "ENVSERVER_HOST": "127.0.0.1",
            "ENVSERVER_PORT": str(port),
            "ENVSERVER_POOL_WORKERS": "1",
            "ENVSERVER_SANDBOX_WORKERS": "1",
            "ENVSERVER_LOG_LEVEL": "warning",
            **env,
        }
        command = [sys.executable, "-m", "envserver.cli", "serve", "--ray"]
        command += ["--ray-address", self.address, "--replicas", str(replicas)]
        done = subprocess.run(  # noqa: S603 - our own interpreter and module
            command,
            cwd=SOURCE,
            env={**self.env, **variables},
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"deploy failed:\n{done.stdout}\n{done.stderr}")
        self.base_url = f"http://127.0.0.1:{port}"
        httpx.get(f"{self.base_url}/readyz", timeout=30).raise_for_status()
        return self.base_url

    def processes(self) -> list[psutil.Process]:
        """The cluster's processes: the head's descendants (Ray's servers, its workers, and the
        replicas' pools and sandboxes)."""
        if self.head is None:
            return []
        try:
            children: list[psutil.Process] = psutil.Process(self.head.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return children

    def replica_processes(self) -> list[psutil.Process]:
        """The processes of envserver's replicas."""
        found = []
        for process in self.processes():
            try:
                if REPLICA_TITLE in " ".join(process.cmdline()):
                    found.append(process)
            except psutil.Error:
                continue
        return found

    def stop(self) -> None:
        """End the head and every process it started, then remove the temporary directory."""
        if self.head is not None:
            processes = [*self.processes(), psutil.Process(self.head.pid)]
            for process in processes:
                try:
                    process.terminate()
                except psutil.Error:
                    continue
            _, alive = psutil.wait_procs(processes, timeout=10)
            for process in alive:
                try:
                    process.kill()
                except psutil.Error:
                    continue
            psutil.wait_procs(alive, timeout=5)
            self.head.wait()
            self.head = None
        shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> RayCluster:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
