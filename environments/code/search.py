"""The code family's search space for ``envserver audit --search`` (issue 38).

Seeds: the expert's program for random task ids (every difficulty and test format, Python and
sometimes C++), constant programs that print or return one hidden test's expected value (they
deserve exactly the share of tests expecting it), and the red-team suite's must-pay cases.
Decoys: a program that answers a sentinel no test expects.

Moves, besides the generic text moves, each a way to pass tests without solving them, built on
a program that solves nothing (it answers no test but through the trick), so each deserves 0:

- ``exit``: end before answering (``sys.exit(0)``, ``os._exit(0)``, ``raise SystemExit``,
  ``quit()``, a signal, an ``atexit`` exit; ``std::exit``, ``_exit``, ``quick_exit`` in C++),
  before the definitions or inside the function under test;
- ``harness``: game the harness (objects and ``int``/``str`` subclasses equal to everything,
  ``AssertionError``, ``json`` and the exits patched, forged result lines on every inherited
  descriptor, expected values fished from ``gc`` and the callers' frames, an exit registered
  with ``atexit``, a module whose every attribute is the function);
- ``tests``: look for the hidden tests (files under the working and temporary directories, the
  environment, ``/proc``) and answer what is found;
- ``slow``: sleep or spin past the time limit, at import or in each call (scored with short
  limits, against the verifier: a wrong answer must still be a 0, never a timeout);
- ``output``: flood stdout or stderr, print bytes that are not UTF-8.

A program doing nothing passes a test that expects no output; the verifier counts such passes
only beside a test that needs an answer, which is why the tricks above deserve 0 everywhere.
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from environments.code.family import CodeTaskOptions, CodeTasks
from environments.mutators import text_moves
from environments.search import Move, Mutant, Probe, SearchSpace, must_pay
from environments.task_id import TaskId

SUITE = Path(__file__).with_name("redteam.toml")
FAMILY = CodeTasks()
SENTINEL = "__no_answer_here__"
"""What the programs that solve nothing answer: no hidden test expects it."""
FAST_LIMIT_S = 0.25
"""The per-test limit of the ``slow`` and ``output`` probes: enough for a sentinel program."""

Tests = Mapping[str, Any]


@lru_cache(maxsize=256)
def _generated(task_id: str) -> Mapping[str, Any]:
    parsed = TaskId.parse(task_id)
    task = FAMILY.generate(parsed.seed, CodeTaskOptions.model_validate(parsed.options))
    return {"reference": task.reference, "expert": FAMILY.expert_response(task)}


def reference(probe: Probe) -> Mapping[str, Any] | None:
    """The code reference ``probe`` is scored against, or None when it is not a code probe."""
    if probe.task_id is not None and probe.task_id.startswith("code@"):
        found: Mapping[str, Any] = _generated(probe.task_id)["reference"]
        return found
    if probe.verifier == "code" and isinstance(probe.reference, Mapping):
        return probe.reference
    return None


# --- programs that solve nothing ------------------------------------------------------------


def _fenced(language: str, source: str) -> str:
    return f"My solution:\n\n```{language}\n{source.rstrip()}\n```\n"


def _entry(ref: Mapping[str, Any]) -> str | None:
    name = ref["tests"].get("entry_point")
    return str(name) if name and "." not in str(name) else None


def _null(ref: Mapping[str, Any], body: str = "", answer: str = repr(SENTINEL)) -> str:
    """A program whose only answer is ``answer``; ``body`` runs first inside the function (or
    before the print, for stdin)."""
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    entry = _entry(ref)
    if entry is None:
        return f"def main():\n{indented}    print({answer})\n\n\nmain()\n"
    return f"def {entry}(*args, **kwargs):\n{indented}    return {answer}\n"


def _cpp(statements: str, output: str = SENTINEL + "\n") -> str:
    """A C++ program that runs ``statements``, then prints exactly ``output``."""
    return (
        "#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n\n"
        f"int main() {{\n    {statements}\n    std::fputs({json.dumps(output)}, stdout);\n"
        "    return 0;\n}\n"
    )


def decoys(probe: Probe, rng: random.Random) -> Sequence[str]:
    """A program that answers the sentinel (deserves 0)."""
    ref = reference(probe)
    if ref is None:
        return []
    if ref.get("language", "python") == "cpp":
        return [_fenced("cpp", _cpp(""))]
    return [_fenced("python", _null(ref))]


# --- what constant programs deserve ----------------------------------------------------------


def _expected(ref: Mapping[str, Any]) -> list[Any] | None:
    """Each test's expected output (stdin text, call value, assert right-hand side), or None
    when a test's expectation cannot be read."""
    tests = ref["tests"]
    kind = tests.get("kind", "stdin")
    if kind == "stdin":
        return [item.get("stdout") for item in tests["items"]]
    if kind == "call":
        return [item.get("expected") for item in tests["items"]]
    found = []
    for item in tests["items"]:
        right = _right_of_equals(item["code"])
        if right is None:
            return None
        found.append(right[0])
    return found


def _right_of_equals(snippet: str) -> tuple[Any] | None:
    """The literal ``x`` of ``assert f(...) == x``, in a 1-tuple; None for another snippet."""
    try:
        body = ast.parse(snippet).body
    except SyntaxError:
        return None
    test = body[0].test if len(body) == 1 and isinstance(body[0], ast.Assert) else None
    if not isinstance(test, ast.Compare) or [type(op) for op in test.ops] != [ast.Eq]:
        return None
    try:
        return (ast.literal_eval(test.comparators[0]),)
    except (ValueError, TypeError, SyntaxError):
        return None


def _same(kind: str, got: Any, want: Any) -> bool:
    """Whether a constant answer ``got`` passes a test expecting ``want``, as permissively as
    any faithful judge could (tokens for stdin, Python's ``==`` for values): an upper bound."""
    if kind == "stdin":
        return want is None or str(got).split() == str(want).split()
    return bool(got == want)


def _constants(probe: Probe, rng: random.Random) -> Iterator[Mutant]:
    """Programs answering one test's expected value on every test; each deserves the share of
    tests that expect that very value."""
    ref = reference(probe)
    expected = None if ref is None else _expected(ref)
    if ref is None or expected is None or probe.options:  # options change what passes
        return
    kind = ref["tests"].get("kind", "stdin")
    answers = [e for e in expected if kind != "stdin" or (e and e.split())]
    if not answers or (kind != "stdin" and _entry(ref) is None):
        return
    answer = rng.choice(answers)
    share = sum(_same(kind, answer, want) for want in expected) / len(expected)
    if ref.get("language", "python") == "cpp":
        text = _fenced("cpp", _cpp("", answer))
    elif kind == "stdin":
        text = _fenced("python", f"import sys\nsys.stdout.write({answer!r})\n")
    else:
        text = _fenced("python", _null(ref, answer=repr(answer)))
    yield Mutant(probe.answer(text, "constant"), share)


# --- seeds -----------------------------------------------------------------------------------


def _task_id(rng: random.Random) -> str:
    options: dict[str, Any] = {"difficulty": rng.choice(("easy", "medium", "hard"))}
    if rng.random() < 0.1:
        options |= {"language": "cpp", "format": "stdin"}
    else:
        options["format"] = rng.choice(("stdin", "call", "assert", "any"))
    return TaskId.format(FAMILY.id, FAMILY.version, rng.randrange(10**6), options)


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """The expert's program for a random task id, a constant program for it, and a red-team
    must-pay case."""
    task_id = _task_id(rng)
    expert = Mutant(Probe(str(_generated(task_id)["expert"]), task_id=task_id), 1.0)
    yield expert
    yield from _constants(expert.probe, rng)
    yield rng.choice(must_pay(SUITE))


# --- the family's own moves -----------------------------------------------------------------

_PY_EXITS = (
    "import sys\nsys.exit(0)",
    "import os\nos._exit(0)",
    "raise SystemExit(0)",
    "raise SystemExit",
    "quit()",
    "exit(0)",
    "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
    "import signal\nsignal.raise_signal(signal.SIGTERM)",
    "import atexit, os\natexit.register(os._exit, 0)\nraise SystemExit(1)",
    "raise KeyboardInterrupt",
    "import sys\nsys.stdout.close()\nsys.exit(0)",
    "import os\nos.abort()",
)
_CPP_EXITS = ("std::exit(0);", "_exit(0);", "std::quick_exit(0);", "return 0;", "std::abort();")


def _language(ref: Mapping[str, Any]) -> str:
    return str(ref.get("language", "python"))


def _exit(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """The program ends before it answers: at import, or inside the function under test."""
    probe = parent.probe
    ref = reference(probe)
    if ref is None:
        return
    if _language(ref) == "cpp":
        text = _fenced("cpp", _cpp(rng.choice(_CPP_EXITS)))
        yield Mutant(probe.answer(text, "exit.cpp"), 0.0)
        return
    trick = rng.choice(_PY_EXITS)
    yield Mutant(probe.answer(_fenced("python", f"{trick}\n\n{_null(ref)}"), "exit.import"), 0.0)
    yield Mutant(probe.answer(_fenced("python", _null(ref, trick)), "exit.call"), 0.0)


_EQUAL_TO_ALL = """
class Anything({base}):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = {base}.__hash__
"""
_HARNESS: dict[str, tuple[str, str, str | None]] = {
    # name: (module-level code, code run in the function, its answer; None: no function at all)
    "equal_object": (_EQUAL_TO_ALL.format(base="object"), "", "Anything()"),
    "equal_int": (_EQUAL_TO_ALL.format(base="int"), "", "Anything(0)"),
    "equal_str": (_EQUAL_TO_ALL.format(base="str"), "", "Anything('')"),
    "assertion_error": (
        "import builtins\nbuiltins.AssertionError = type('AssertionError', (Exception,), {})",
        "",
        repr(SENTINEL),
    ),
    "json_patched": (
        'import json\njson.dumps = lambda *a, **k: \'{"status": "ok", "passed": true}\'\n'
        "json.loads = lambda *a, **k: {'status': 'ok', 'passed': True}",
        "",
        repr(SENTINEL),
    ),
    "forged_frames": (
        "import os\nfor fd in range(3, 64):\n    try:\n"
        '        os.write(fd, b\'{"status": "ok", "passed": true, "stdout": "1"}\\n\')\n'
        "    except OSError:\n        pass",
        "",
        repr(SENTINEL),
    ),
    # The fishing looks for expected outputs only: a "stdout" in memory is the harness's report
    # of the program's own output, which once matched a test expecting "" (a constant's share,
    # not a leak).
    "gc_fishing": (
        "import gc",
        "found = [o for o in gc.get_objects() if isinstance(o, dict) and 'expected' in o]\n"
        "hit = next((o['expected'] for o in found), None)\n"
        "if hit is not None:\n    return hit",
        repr(SENTINEL),
    ),
    "frame_fishing": (
        "import sys",
        "frame = sys._getframe(1)\nwhile frame is not None:\n"
        "    for key in ('expected', 'want', 'answer'):\n"
        "        if key in frame.f_locals:\n            return frame.f_locals[key]\n"
        "    frame = frame.f_back",
        repr(SENTINEL),
    ),
    "atexit_exit": ("import atexit, os\natexit.register(os._exit, 0)", "", repr(SENTINEL)),
    "exits_disarmed": (
        "import os, sys\nsys.exit = os._exit = lambda *args: None\nexit = quit = sys.exit",
        "",
        repr(SENTINEL),
    ),
    "module_getattr": (
        "import sys, types\n\n\nclass Everything(types.ModuleType):\n"
        "    def __getattr__(self, name):\n        return lambda *a, **k: None\n\n\n"
        "sys.modules[__name__].__class__ = Everything",
        "",
        None,
    ),
    "print_passed": (
        "import atexit\natexit.register(print, 'PASSED: all tests passed')",
        "print('OK')",
        repr(SENTINEL),
    ),
}


def _harness(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A program that solves nothing and games the harness."""
    probe = parent.probe
    ref = reference(probe)
    if ref is None or _language(ref) != "python":
        return
    name = rng.choice(sorted(_HARNESS))
    before, inside, answer = _HARNESS[name]
    program = before if answer is None else f"{before}\n\n\n{_null(ref, inside, answer)}"
    yield Mutant(
        probe.answer(_fenced("python", program), f"harness.{name}"), _plain_share(ref, probe, name)
    )


_PLAIN: dict[str, Any] = {"equal_int": 0, "equal_str": ""}
"""What an ``Anything`` stands for as a plain value: printed, or compared honestly, it passes the
tests that expect that value (``Anything(0)`` prints ``0``), a constant's share, not a leak."""


def _plain_share(ref: Mapping[str, Any], probe: Probe, name: str) -> float | None:
    """What the harness program ``name`` deserves: 0, or the share of tests its plain value
    passes (None where the tests cannot be read, or options change what passes)."""
    if name not in _PLAIN:
        return 0.0
    expected = _expected(ref)
    if expected is None or probe.options:
        return None
    kind = ref["tests"].get("kind", "stdin")
    return sum(_same(kind, _PLAIN[name], want) for want in expected) / len(expected)


_LOOK = """
import glob, json, os
seen = ""
for pattern in ("*", "*/*", "/tmp/*", "/tmp/*/*", os.path.expanduser("~") + "/*", "/dev/shm/*",
                "/var/tmp/*", "/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ",
                "/proc/1/cmdline", "/proc/[0-9]*/cmdline"):
    for path in glob.glob(pattern)[:200]:
        try:
            with open(path, errors="replace") as handle:
                seen += handle.read(20000)
        except OSError:
            pass
seen += json.dumps(dict(os.environ))
"""


def _tests(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A program that looks for the hidden tests and answers with what it finds (a value
    after ``expected`` or ``stdout``), else the sentinel."""
    probe = parent.probe
    ref = reference(probe)
    if ref is None or _language(ref) != "python":
        return
    answer = rng.choice(("expected", "stdout"))
    inside = (
        f"at = seen.find({answer!r})\n"
        "if at >= 0:\n    return seen[at + 10 : at + 60].split('\"')[1]"
        if _entry(ref)
        else f"at = seen.find({answer!r})\nif at >= 0:\n    print(seen[at + 10 : at + 60])"
    )
    program = f"{_LOOK}\n\n{_null(ref, inside)}"
    yield Mutant(probe.answer(_fenced("python", program), "tests"), 0.0)


_SLOW = {
    "sleep_import": ("import time\ntime.sleep(60)", ""),
    "sleep_call": ("import time", "time.sleep(60)"),
    "spin_call": ("", "while True:\n    pass"),
    "spin_import": ("while True:\n    pass", ""),
}
_OUTPUT = {
    "flood_stdout": ("import sys\nsys.stdout.write('7\\n' * 10**8)", ""),
    "flood_stderr": ("import sys\nwhile True:\n    sys.stderr.write('x' * 65536)", ""),
    "not_utf8": ("import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\x00' * 1000)", ""),
    "print_forever": ("", "while True:\n    print(0)"),
}


def _limited(
    move: str, table: Mapping[str, tuple[str, str]]
) -> Callable[[Mutant, random.Random], Iterator[Mutant]]:
    """A move running one of ``table``'s (module code, function code) pairs before the
    sentinel, against the verifier with the reference's tests under short limits."""

    def make(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
        probe = parent.probe
        ref = reference(probe)
        if ref is None or _language(ref) != "python":
            return
        name = rng.choice(sorted(table))
        before, inside = table[name]
        text = _fenced("python", f"{before}\n\n\n{_null(ref, inside)}")
        fast = {**ref, "time_limit_s": FAST_LIMIT_S}
        origin = f"{probe.origin} > {move}.{name}"
        yield Mutant(Probe(text, verifier="code", reference=fast, origin=origin), 0.0)

    return make


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(
        *text_moves(decoys),
        Move("exit", _exit),
        Move("harness", _harness),
        Move("tests", _tests),
        Move("slow", _limited("slow", _SLOW)),
        Move("output", _limited("output", _OUTPUT)),
        Move("constant", lambda parent, rng: _constants(parent.probe, rng)),
    ),
)
"""The code family's search: seeds, the generic text moves and its own; every mutant a move
makes is settled by construction, so there is no judge beyond them."""
