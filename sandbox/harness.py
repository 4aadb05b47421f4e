"""What a sandboxed Python process runs: the program itself, or the program under a test harness.

Everything here executes *inside* the sandbox, next to untrusted code, so nothing here decides a
verdict. The harness only reports outputs (stdout of a run, the plain-data return value of a
call, whether a test snippet raised) on a channel whose content the trusted side judges. A
program that patches this module, exits early or forges frames can only misreport its own
outputs, which it controls anyway; it never sees expected outputs.

Modes (one per process):
``main``    run the program as ``__main__`` on the real stdin/stdout.
``script``  for each stdin test sent on the channel, run the program with that stdin, report stdout.
``serve``   define the program once, then answer calls ``name(*args)`` sent on the channel.
``judge``   run test snippets (asserts) whose calls of the program's functions travel to a
            ``serve`` process on a second channel: the program never runs in the judge.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import sys
import traceback
import types
from typing import Any, NoReturn

from sandbox import frames, values

CHANNEL_FD = 3
PEER_FD = 4
SOURCE_NAME = "main.py"


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


def _new_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__["__file__"] = SOURCE_NAME
    module.__dict__["__builtins__"] = builtins
    sys.modules[name] = module
    return module


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    sys.stderr.write(f"{exc.code}\n")
    return 1


def run_main(source: str) -> int:
    """Run ``source`` as ``__main__``; the process exit code."""
    sys.argv = [SOURCE_NAME]
    try:
        code = compile(source, SOURCE_NAME, "exec")
        exec(code, _new_module("__main__").__dict__)  # noqa: S102 - this is the sandbox
    except SystemExit as exc:
        return _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


class _CappedBuffer(io.BytesIO):
    """Captured stdout that stops growing at ``limit`` bytes (the rest is counted, not kept)."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.dropped = 0

    def write(self, data: Any) -> int:
        room = self.limit - self.tell()
        chunk = bytes(data)
        if len(chunk) > room:
            self.dropped += len(chunk) - max(room, 0)
            chunk = chunk[: max(room, 0)]
        super().write(chunk)
        return len(data)


def run_script(source: str, output_limit: int) -> None:
    """``script`` mode: one program run per stdin test, all in this process."""
    try:
        code = compile(source, SOURCE_NAME, "exec")
    except SyntaxError as exc:
        frames.write(CHANNEL_FD, {"ready": False, "error": _error(exc)})
        return
    frames.write(CHANNEL_FD, {"ready": True})
    real_stdin, real_stdout = sys.stdin, sys.stdout
    while True:
        try:
            request = frames.read(CHANNEL_FD)
        except frames.FrameError:
            return
        captured = _CappedBuffer(output_limit)
        stdout = io.TextIOWrapper(captured, encoding="utf-8", write_through=True)
        sys.stdin = io.TextIOWrapper(io.BytesIO(str(request["stdin"]).encode()), encoding="utf-8")
        sys.stdout = stdout
        error, exit_code = None, 0
        sys.argv = [SOURCE_NAME]
        try:
            exec(code, _new_module("__main__").__dict__)  # noqa: S102 - this is the sandbox
        except SystemExit as exc:
            exit_code = _exit_code(exc)
        except BaseException as exc:
            error, exit_code = _error(exc), 1
        try:
            stdout.flush()
        except BaseException as exc:
            error = error or _error(exc)
        output = captured.getvalue().decode("utf-8", "replace") if not captured.closed else ""
        sys.stdin, sys.stdout = real_stdin, real_stdout
        frames.write(
            CHANNEL_FD,
            {"stdout": output, "error": error, "exit_code": exit_code, "dropped": captured.dropped},
        )


def _callable(namespace: dict[str, Any], name: str) -> Any:
    """``name`` in the program: a function, or ``Class.method`` called on a fresh instance
    (LeetCode style)."""
    head, _, method = name.partition(".")
    target = namespace[head]
    if method:
        instance = target() if isinstance(target, type) else target
        return getattr(instance, method)
    return target


def serve(source: str, channel: int = CHANNEL_FD) -> None:
    """``serve`` mode: define the program once, then answer ``call`` frames on ``channel``."""
    module = _new_module("solution")
    try:
        exec(compile(source, SOURCE_NAME, "exec"), module.__dict__)  # noqa: S102 - sandbox
    except BaseException as exc:
        frames.write(channel, {"ready": False, "error": _error(exc)})
        return
    names = sorted(
        name
        for name, value in module.__dict__.items()
        if not name.startswith("__") and isinstance(value, (types.FunctionType, type))
    )
    frames.write(channel, {"ready": True, "names": names})
    while True:
        try:
            request = frames.read(channel)
        except frames.FrameError:
            return
        try:
            function = _callable(module.__dict__, request["call"])
            args = values.decode(request["args"])
            kwargs = values.decode(request.get("kwargs", {}))
            result = function(*args, **kwargs)
            reply = {"value": values.encode(result)}
        except SystemExit as exc:
            reply = {"error": f"SystemExit: {exc.code}", "type": "SystemExit"}
        except BaseException as exc:
            reply = {"error": _error(exc), "type": type(exc).__name__}
        sys.stdout.flush()
        frames.write(channel, reply)


class CandidateError(Exception):
    """The program raised an exception that is not a built-in type (re-raised in the judge)."""


class _Remote:
    """Stands in for one of the program's functions inside the judge."""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            payload = {"args": values.encode(list(args)), "kwargs": values.encode(kwargs)}
        except values.NotPlainData as exc:
            raise TypeError(f"an argument cannot cross into the sandbox: {exc}") from None
        try:
            frames.write(PEER_FD, {"call": self.__name__, **payload})
            reply = frames.read(PEER_FD)
        except (OSError, frames.FrameError) as exc:
            raise CandidateError(f"the program stopped answering: {exc}") from None
        if "value" in reply:
            return values.decode(reply["value"])
        kind = getattr(builtins, str(reply.get("type")), None)
        if isinstance(kind, type) and issubclass(kind, Exception):
            raise kind(str(reply.get("error")))
        raise CandidateError(str(reply.get("error")))


def judge(names: list[str]) -> None:
    """``judge`` mode: run each test snippet sent on the channel against remote functions."""
    frames.write(CHANNEL_FD, {"ready": True})
    while True:
        try:
            request = frames.read(CHANNEL_FD)
        except frames.FrameError:
            return
        namespace: dict[str, Any] = {"__name__": "__test__", "__builtins__": builtins}
        # The program's functions, except any that would shadow a builtin the test relies on
        # (a program defining ``abs`` must not change what ``abs`` means in the judge).
        namespace.update({name: _Remote(name) for name in names if not hasattr(builtins, name)})
        if request.get("entry_point"):
            namespace["candidate"] = _Remote(request["entry_point"])
        try:
            exec(compile(request["code"], "test.py", "exec"), namespace)  # noqa: S102 - sandbox
            reply: dict[str, Any] = {"passed": True}
        except BaseException as exc:
            reply = {"passed": False, "error": _error(exc)}
        frames.write(CHANNEL_FD, reply)


def flush_and_exit(code: int) -> NoReturn:
    """Flush Python's buffers and leave without running the parent's ``atexit`` handlers."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):  # a broken stream: nothing left to report to
            stream.flush()
    os._exit(code)
