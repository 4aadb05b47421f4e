"""The only place untrusted code runs: isolated warm workers, limits, test harnesses.

``default()`` is the sandbox of this process: inside the server's verifier workers, the
server's own pool (over its Unix socket); anywhere else, a local pool started on first use.
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
    from sandbox.runner import Runs

SOCKET_ENV = "ENVSERVER_SANDBOX_SOCKET"
_lock = _thread.allocate_lock()
_default: Runs | None = None


def default() -> Runs:
    """This process's sandbox (started on first use when no server provides one)."""
    global _default  # noqa: PLW0603 - one sandbox per process, created lazily
    with _lock:
        if _default is None:
            path = os.environ.get(SOCKET_ENV)
            if path:
                from sandbox.remote import RemoteSandbox  # noqa: PLC0415 - see the docstring

                _default = RemoteSandbox(path)
            else:
                from sandbox.backends import open_sandbox  # noqa: PLC0415 - starts processes

                local = open_sandbox()
                atexit.register(local.close)
                _default = local
        return _default
