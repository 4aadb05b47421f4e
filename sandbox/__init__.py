"""The only place untrusted code runs: isolated warm workers, limits, test harnesses.

``default()`` is the sandbox of this process: inside the server and its verifier workers, the
server's own pool (over its Unix socket), or, when that did not start, one that fails every call
with the reason (never a pool of the process's own: a configured backend that cannot start must
not be replaced by another); anywhere else, a local pool started on first use.
This module imports nothing heavy at load time: the workers import the package too, and every
megabyte they carry makes each fork slower. Nor ``threading`` (its lock here is ``_thread``'s):
once imported, ``threading`` re-initialises itself in every forked child, which cost each run
about 110 page faults of copy-on-write (a fifth of what a trivial run touches).
"""

from __future__ import annotations

import _thread
import atexit
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from sandbox.runner import Runs

SOCKET_ENV = "ENVSERVER_SANDBOX_SOCKET"
UNAVAILABLE_ENV = "ENVSERVER_SANDBOX_UNAVAILABLE"  # why the server's sandbox did not start
_lock = _thread.allocate_lock()
_default: Runs | None = None


def use_server(socket_path: str | None, reason: str) -> Callable[[], None]:
    """Make ``default()`` the server's sandbox in this process and the processes it starts: the
    one at ``socket_path``, or, without one, a sandbox that fails every call with ``reason``.
    Returns what puts this process's sandbox back as it was, for a server that stops in a
    process that goes on (an app a test runs in its own process)."""
    global _default  # noqa: PLW0603 - see default()
    with _lock:
        before = _default, os.environ.get(SOCKET_ENV), os.environ.get(UNAVAILABLE_ENV)
        _default = None
        if socket_path:
            os.environ[SOCKET_ENV] = socket_path
            os.environ.pop(UNAVAILABLE_ENV, None)
        else:
            os.environ[UNAVAILABLE_ENV] = reason or "the server's sandbox did not start"
            os.environ.pop(SOCKET_ENV, None)

    def restore() -> None:
        global _default  # noqa: PLW0603 - see default()
        with _lock:
            _default = before[0]
            for name, value in ((SOCKET_ENV, before[1]), (UNAVAILABLE_ENV, before[2])):
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value

    return restore


def default() -> Runs:
    """This process's sandbox (started on first use when no server provides one)."""
    global _default  # noqa: PLW0603 - one sandbox per process, created lazily
    with _lock:
        if _default is None:
            path = os.environ.get(SOCKET_ENV)
            reason = os.environ.get(UNAVAILABLE_ENV)
            if path:
                from sandbox.remote import RemoteSandbox  # noqa: PLC0415 - see the docstring

                _default = RemoteSandbox(path)
            elif reason:
                from sandbox.remote import UnavailableSandbox  # noqa: PLC0415

                _default = UnavailableSandbox(reason)
            else:
                from sandbox.backends import open_sandbox  # noqa: PLC0415 - starts processes

                local = open_sandbox()
                atexit.register(local.close)
                _default = local
        return _default
