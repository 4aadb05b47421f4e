"""Warm variants of Python that preload a heavy library once per worker (``Language.preload``)."""

from __future__ import annotations

import importlib.util

import pytest

from sandbox import languages
from sandbox.model import RunRequest
from sandbox.runner import Sandbox, SandboxInputError, check_language

HAS_SBOL3 = importlib.util.find_spec("sbol3") is not None


def test_a_missing_preloaded_module_makes_the_language_unavailable() -> None:
    language = languages.Language(
        "python-nothing", "main.py", warm=True, preload=("no_such_module_here",)
    )
    assert not language.available()
    assert "no_such_module_here" in language.missing
    assert languages.get("python").missing == ""


@pytest.mark.skipif(not HAS_SBOL3, reason="the sbol extra is not installed")
def test_preloaded_modules_are_loaded_before_the_program_starts(local_sandbox: Sandbox) -> None:
    """The program finds the module already imported: the worker paid for it, not the run."""
    source = "import sys\nprint('sbol3' in sys.modules)\n"
    check_language("python-sbol3")
    records = [local_sandbox.run(RunRequest(language="python-sbol3", source=source))]
    records += [local_sandbox.run(RunRequest(language="python-sbol3", source=source))]
    assert [r.stdout for r in records] == ["True\n", "True\n"]


def test_an_unknown_variant_is_refused_clearly() -> None:
    with pytest.raises(SandboxInputError, match="unknown language"):
        check_language("python-nonexistent")
