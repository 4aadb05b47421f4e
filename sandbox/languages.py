"""The languages the sandbox runs: adding one is a table entry.

``warm`` languages run inside the worker's pre-imported interpreter (a fork, no exec), so
``import`` costs are paid once per worker. A warm variant may name ``preload`` modules (a heavy
library a family's programs all use): the worker imports them into itself before its first run
of that variant, and every later run forks with them loaded. Compiled languages build once per
distinct source (cached by hash inside the worker) and run the binary per test. ``{src}`` and
``{bin}`` are file names inside the run's scratch directory.
"""

from __future__ import annotations

import functools
import importlib.util
import shutil
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Language:
    """How to build and run one language."""

    name: str
    source_file: str
    run: tuple[str, ...] = ()
    compile: tuple[str, ...] = ()
    warm: bool = False
    aliases: tuple[str, ...] = field(default=())
    preload: tuple[str, ...] = field(default=())

    @property
    def compiled(self) -> bool:
        """Whether a build step precedes running."""
        return bool(self.compile)

    @property
    def tool(self) -> str:
        """The program this language needs on PATH ('' for the warm interpreter)."""
        command = self.compile or self.run
        return command[0] if command and not self.warm else ""

    def available(self) -> bool:
        """Whether this machine has the tool and the preloaded modules (looked up once: it is
        checked on every run)."""
        has_tool = not self.tool or _on_path(self.tool)
        return has_tool and all(_installed(module) for module in self.preload)

    @property
    def missing(self) -> str:
        """What ``available`` lacks, for an error message ('' when available)."""
        if self.tool and not _on_path(self.tool):
            return f"{self.tool} missing"
        absent = [module for module in self.preload if not _installed(module)]
        return f"Python module {', '.join(absent)} missing" if absent else ""


@functools.cache
def _on_path(tool: str) -> bool:
    return shutil.which(tool) is not None


@functools.cache
def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


LANGUAGES: tuple[Language, ...] = (
    Language("python", "main.py", warm=True, aliases=("python3", "py")),
    # pySBOL3 (with rdflib and pyshacl: ~0.4 s to import) for the sbol family's programs.
    Language("python-sbol3", "main.py", warm=True, preload=("sbol3",)),
    Language(
        "cpp",
        "main.cpp",
        compile=("g++", "-O2", "-std=gnu++17", "-pipe", "-o", "{bin}", "{src}"),
        run=("./{bin}",),
        aliases=("c++",),
    ),
    Language(
        "c",
        "main.c",
        compile=("gcc", "-O2", "-std=gnu11", "-pipe", "-o", "{bin}", "{src}", "-lm"),
        run=("./{bin}",),
    ),
    Language("bash", "main.sh", run=("bash", "{src}"), aliases=("sh",)),
)

BY_NAME: dict[str, Language] = {
    name: language for language in LANGUAGES for name in (language.name, *language.aliases)
}


class UnknownLanguage(ValueError):
    """The request names a language the sandbox does not run."""


def get(name: str) -> Language:
    """The language called ``name`` (or one of its aliases)."""
    try:
        return BY_NAME[name.lower()]
    except KeyError:
        known = ", ".join(language.name for language in LANGUAGES)
        raise UnknownLanguage(f"unknown language {name!r}; this sandbox runs {known}") from None
