"""What verl's datasets carry as ``ground_truth``, turned into the references our verifiers read.

verl hands over whatever the parquet row held, as numpy values: scalars (``numpy.int64``),
object arrays (a list of acceptable answers) and, for code, the test formats of the datasets it
ships preprocessing for (``codecontests``, ``apps``, ``taco``: ``{"inputs": [...], "outputs":
[...]}``, with ``fn_name`` for call-style tasks, often as a JSON string) or SandboxFusion's
(``[{"input": {"stdin": ...}, "output": {"stdout": ...}}]``). The code verifier wants
``{"tests": {"kind", "entry_point", "items"}}``; these functions map one to the other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

CODE = "code"
"""The verifier whose references are test suites rather than answers."""
SEVERAL = frozenset({"math"})
"""Verifiers whose reference is one answer, so a list ground truth is several acceptable ones
(verl's math sets carry such lists); elsewhere a list may be the reference itself."""


def plain(value: Any) -> Any:
    """numpy scalars and arrays (at any depth, inside lists and dicts) as plain Python, so that
    they serialise to JSON."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _stdin(value: Any) -> str:
    # APPS stores some inputs as lists of lines.
    return "\n".join(map(str, value)) if isinstance(value, list) else str(value)


def _expected(value: Any) -> Any:
    # APPS/TACO wrap a call's expected return value in a one-element list (their checker accepts
    # either); a single element is the value.
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _io_tests(reference: Mapping[str, Any]) -> dict[str, Any]:
    """verl's ``{"inputs", "outputs"[, "fn_name"]}`` as the code verifier's tests."""
    inputs, outputs = list(reference["inputs"]), list(reference["outputs"])
    if len(inputs) != len(outputs):
        # Left as it is: the verifier reports it as a bad reference, with its reason.
        return dict(reference)
    fn_name = reference.get("fn_name")
    if fn_name:
        items = [
            {"args": i if isinstance(i, list) else [i], "expected": _expected(o)}
            for i, o in zip(inputs, outputs, strict=True)
        ]
        return {"tests": {"kind": "call", "entry_point": fn_name, "items": items}}
    items = [
        {"stdin": _stdin(i), "stdout": _stdin(o)} for i, o in zip(inputs, outputs, strict=True)
    ]
    return {"tests": {"kind": "stdin", "items": items}}


def _sandbox_fusion_tests(cases: list[Any]) -> dict[str, Any]:
    """SandboxFusion's ``[{"input": {"stdin"}, "output": {"stdout"}}]`` as stdin tests."""
    items = [{"stdin": c["input"]["stdin"], "stdout": c["output"]["stdout"]} for c in cases]
    return {"tests": {"kind": "stdin", "items": items}}


def _is_sandbox_fusion(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(c, Mapping)
            and isinstance(c.get("input"), Mapping)
            and isinstance(c.get("output"), Mapping)
            and "stdin" in c["input"]
            for c in value
        )
    )


def code_reference(truth: Any) -> Any:
    """A code ground truth in any of the formats above as the code verifier's reference;
    anything else unchanged (the verifier then says what is wrong with it)."""
    if isinstance(truth, str):
        try:
            truth = json.loads(truth)
        except json.JSONDecodeError:
            return truth
    if (
        isinstance(truth, Mapping)
        and isinstance(truth.get("inputs"), list)
        and isinstance(truth.get("outputs"), list)
    ):
        return _io_tests(truth)
    if _is_sandbox_fusion(truth):
        return _sandbox_fusion_tests(truth)
    return truth


def references(verifier: str | None, truth: Any) -> list[Any]:
    """The references to score a response against (its best score counts): several where the
    ground truth is a list of acceptable answers, one otherwise."""
    truth = plain(truth)
    if verifier == CODE:
        return [code_reference(truth)]
    if verifier in SEVERAL and isinstance(truth, list) and truth:
        return truth
    return [truth]
