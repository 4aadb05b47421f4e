"""Level 1, execution: the candidate program runs in the sandbox and hands over its document.

The program runs in a warm ``python-sbol3`` worker (pySBOL3 imported once per worker) inside a
small trusted wrapper that, in the same sandboxed process: installs an offline ``tyto`` (the
ontology look-ups that would go to the network are answered from ``ontology.py``'s table), sets
a default namespace, runs the program as ``__main__``, takes the ``sbol3.Document`` it left in
the module-level variable ``doc`` and writes it as sorted N-Triples to a file the sandbox hands
back. The trusted side reads only that file, never printed text. A program that forges the file
only hands over a document of its own making, which the later levels judge like any other.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from sandbox.model import Limits, RunRecord, RunRequest
from sandbox.runner import Runs
from verifiers.sbol import ontology

LANGUAGE = "python-sbol3"
PROGRAM_FILE = "circuit.py"
DOCUMENT_FILE = "__circuit__.nt"
NAMESPACE = "https://example.org/circuit/"
_MESSAGE_CHARS = 300

WRAPPER = f'''\
import sys
import traceback
import types

import sbol3

_TABLES = {{"SO": {ontology.SO_TERMS!r}, "SBO": {ontology.SBO_TERMS!r}}}
_ALIASES = {ontology.ALIASES!r}


class _Ontology:
    """tyto's look-ups, answered offline."""

    def __init__(self, name):
        self._name = name

    def get_uri_by_term(self, term):
        key = _ALIASES[self._name].get(term, term).replace(" ", "_")
        if key in _TABLES[self._name]:
            return _TABLES[self._name][key]
        raise LookupError(
            f"tyto.{{self._name}}: {{term!r}} is not in the offline ontology table (the sandbox "
            "has no network); use the sbol3 constants"
        )

    def get_term_by_uri(self, uri):
        for term, known in _TABLES[self._name].items():
            if known == uri:
                return term.replace("_", " ")
        raise LookupError(f"tyto.{{self._name}}: {{uri!r}} is not in the offline ontology table")

    def __getattr__(self, term):
        if term.startswith("__"):
            raise AttributeError(term)
        return self.get_uri_by_term(term)


_tyto = types.ModuleType("tyto")
_tyto.SO = _Ontology("SO")
_tyto.SBO = _Ontology("SBO")
sys.modules["tyto"] = _tyto
sbol3.set_namespace({NAMESPACE!r})

with open({PROGRAM_FILE!r}, encoding="utf-8") as _file:
    _source = _file.read()
_globals = {{"__name__": "__main__", "__file__": {PROGRAM_FILE!r}, "__builtins__": __builtins__}}
try:
    exec(compile(_source, {PROGRAM_FILE!r}, "exec"), _globals)
except SystemExit as _exit:
    if _exit.code not in (None, 0):
        sys.stderr.write(f"the program exited with status {{_exit.code}}\\n")
        sys.exit(2)
except BaseException:
    _lines = traceback.format_exc().splitlines()
    _kept = [line for line in _lines if "main.py" not in line]
    sys.stderr.write("\\n".join(_kept) + "\\n")
    sys.exit(1)
_doc = _globals.get("doc")
if not isinstance(_doc, sbol3.Document):
    _named = sorted(k for k, v in _globals.items() if isinstance(v, sbol3.Document))
    _hint = f" (found one named {{_named[0]}}: call it doc)" if _named else ""
    sys.stderr.write(
        f"the program left no sbol3.Document in a module-level variable named doc{{_hint}}\\n"
    )
    sys.exit(3)
try:
    _text = _doc.write_string(sbol3.SORTED_NTRIPLES)
except BaseException as _exc:
    sys.stderr.write(f"the document cannot be serialised: {{type(_exc).__name__}}: {{_exc}}\\n")
    sys.exit(4)
with open({DOCUMENT_FILE!r}, "w", encoding="utf-8") as _file:
    _file.write(_text)
'''


class SandboxFailed(Exception):
    """The sandbox itself failed (infrastructure): the item scores ``error``, never 0."""


@dataclass(frozen=True)
class Execution:
    """How the run went: the document's text, or why level 1 failed."""

    document: str | None
    failure: str
    record: RunRecord


def _reason(record: RunRecord, limits: Limits) -> str:
    """Why the program failed, from its record (its stderr is its own, shown back to it)."""
    if record.status == "timeout":
        return f"the program ran past its {limits.wall_s:g} s limit"
    if record.status == "memory_limit":
        return f"the program ran out of memory ({limits.memory_mb} MiB)"
    if record.status == "output_limit":
        return "the program printed (or wrote) more than the sandbox allows"
    lines = [line.strip() for line in record.stderr.splitlines() if line.strip()]
    where = next((ln for ln in reversed(lines) if ln.startswith(f'File "{PROGRAM_FILE}"')), "")
    last = lines[-1] if lines else f"exit code {record.exit_code}"
    text = f"{last} ({where.split(',')[1].strip()})" if where.count(",") >= 1 else last
    return text[:_MESSAGE_CHARS]


def run(source: str, *, limits: Limits, sandbox: Runs) -> Execution:
    """Run ``source`` in ``sandbox``; ``SandboxFailed`` when the sandbox (not the program)
    failed."""
    request = RunRequest(
        language=LANGUAGE,
        source=WRAPPER,
        files={PROGRAM_FILE: base64.b64encode(source.encode()).decode()},
        fetch_files=[DOCUMENT_FILE],
        limits=limits,
    )
    record = sandbox.run(request)
    if record.status == "sandbox_error":
        raise SandboxFailed(record.detail or "the sandbox failed")
    if record.status != "ok":
        return Execution(None, _reason(record, limits), record)
    encoded = record.files.get(DOCUMENT_FILE)
    if encoded is None:
        return Execution(None, "the program left no document", record)
    try:
        text = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return Execution(None, "the document file is not UTF-8 text", record)
    return Execution(text, "", record)
