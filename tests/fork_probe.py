"""Run as ``python -m tests.fork_probe SECONDS``: what a pool's fork server does, watched.

It loads every family as the server does before its fork server imports what they imported
(``discover``), recording every thread, process and socket started meanwhile (none may be: what
the fork server starts does not survive into the workers forked from it), then forks as the pool
does and starts a worker in the child (``attach``: its registry and the families' resources,
with no server sandbox) and runs its warm-up, which must finish within SECONDS. Prints one JSON
line: the import-time side effects (what and where) and how the child ended; a child that hangs
dumps every thread's stack.
"""

from __future__ import annotations

import faulthandler
import json
import os
import socket
import subprocess
import sys
import threading
import time
import traceback
from typing import Any

_started: list[dict[str, str]] = []


def _where() -> str:
    # The innermost frames of ours, without this module's wrappers.
    frames = [f for f in traceback.extract_stack()[:-2] if __file__ not in f.filename]
    return "".join(traceback.format_list(frames[-6:]))


def _recording(kind: str, original: Any) -> Any:
    def record(self: Any, *args: Any, **kwargs: Any) -> Any:
        _started.append({"kind": kind, "what": repr(args[:1]), "where": _where()})
        return original(self, *args, **kwargs)

    return record


def _imports() -> list[dict[str, str]]:
    """Import the families as the fork server does; what they started meanwhile."""
    originals = (threading.Thread.start, subprocess.Popen.__init__, socket.socket.__init__)
    threading.Thread.start = _recording("thread", originals[0])  # type: ignore[method-assign]
    subprocess.Popen.__init__ = _recording("process", originals[1])  # type: ignore[method-assign]
    socket.socket.__init__ = _recording("socket", originals[2])  # type: ignore[method-assign]
    try:
        from envserver.config import Settings
        from envserver.registry import discover  # the import is what is watched

        discover(Settings().plugins)
    finally:
        threading.Thread.start = originals[0]  # type: ignore[method-assign]
        subprocess.Popen.__init__ = originals[1]  # type: ignore[method-assign]
        socket.socket.__init__ = originals[2]  # type: ignore[method-assign]
    return list(_started)


def _warm_child(bound_s: float) -> None:  # pragma: no cover - runs in the forked child
    from envserver.config import Settings
    from envserver.worker import attach, warm_up

    # A hang prints every thread's stack (to the inherited stderr) and ends the child.
    faulthandler.dump_traceback_later(bound_s, exit=True)
    attach(None, "the fork probe runs no server sandbox", Settings())
    warm_up()
    faulthandler.cancel_dump_traceback_later()
    os._exit(0)


def main() -> None:
    bound_s = float(sys.argv[1])
    side_effects = _imports()
    threads = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _warm_child(bound_s)
    deadline = started + bound_s + 10
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    ended = "hung" if status is None else ("ok" if status == 0 else f"wait status {status}")
    print(
        json.dumps(
            {
                "side_effects": side_effects,
                "threads_after_import": threads,
                "child": ended,
                "seconds": round(time.monotonic() - started, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
