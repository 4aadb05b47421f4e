"""What each score ran: the stamp of who scored it (``name@version``) and a digest of the source
and data of the family it belongs to, so a stored reward can be checked against what scores it
today (``envserver reverify``).

A family's digest is SHA-256 over the files it runs, each as its path (relative to the folder
its top-level package lies in) and its bytes, in path order:

- every file under the directory of the declaration's package (``environments/<family>/``: its
  modules and its data files), except what no score reads: documentation (``*.md``), licence
  texts, page templates (``templates/``), the red-team suite and byte-compiled files;
- every module of the project's packages (``environments``, ``verifiers``, ``sandbox``, and the
  declaration's own top-level package) that those modules import, transitively, found by reading
  their import statements (an import inside a function counts), with the other files of each
  package directory such a module lies in below the top level (``verifiers/<family>/``).

So a change to the family's generator, its verifier, a helper the verifier imports
(``verifiers/<family>_<helper>.py``), a shared module (``verifiers/score.py``, ``environments/
single_turn.py``) or a data file it ships changes the digest; editing its README does not. Data
a family reads from outside its package (a dataset at a configured path, a store) is named by
the server's configuration, not digested; an environment a family adds while serving is pinned
by its version, which names one content-addressed source.

The digest is computed from the files the running process imports from, once per family and
server process, before it is ready (0.7 s for the eight families here, on a busy 2-core
machine); ``digest_of_tree`` computes it from any tree of files (a git revision's: see
``tests/fixtures/reverify/record_math_drift.py``), so a digest recorded earlier can be
recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from prometheus_client.core import GaugeMetricFamily, Metric

from environments.base import Environment
from environments.family import Family, owner
from verifiers.base import Verifier

PROJECT_PACKAGES = ("environments", "verifiers", "sandbox")
"""The packages a family's modules may import from the project (never ``envserver``: the
layers)."""
SKIPPED_SUFFIXES = (".md", ".pyc", ".pyo")
SKIPPED_NAMES = frozenset({"LICENSE", "COPYING", "NOTICE", "py.typed", "redteam.toml"})
SKIPPED_DIRS = frozenset({"__pycache__", "templates"})
DIGEST_CHARS = 16
"""Hex digits a digest is given in (64 bits: a collision between two versions is not a risk)."""

Reader = Callable[[PurePosixPath], bytes | None]
"""The bytes of a file of a tree by its relative path, or None when there is no such file."""
Lister = Callable[[PurePosixPath], list[PurePosixPath]]
"""Every file under a directory of a tree, recursively, by relative path."""


@dataclass(frozen=True)
class Tree:
    """A tree of files to digest: the installed one, or a git revision's."""

    read: Reader
    listing: Lister


def _skipped(path: PurePosixPath) -> bool:
    return (
        path.suffix in SKIPPED_SUFFIXES
        or path.name in SKIPPED_NAMES
        or any(part in SKIPPED_DIRS for part in path.parts)
    )


def _module_file(tree: Tree, module: str) -> PurePosixPath | None:
    """The file of ``module`` in ``tree`` (a module file or a package's ``__init__``)."""
    base = PurePosixPath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if tree.read(candidate) is not None:
            return candidate
    return None


_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. ,\t]+)", re.M)


def _names(text: str) -> Iterator[str]:
    """The names of an import list (``a``, ``b as c``, ``(d, e)``), without their aliases."""
    for part in text.strip().strip("()").split(","):
        words = part.split()
        if words and words[0] != "*":
            yield words[0]


def _imports(source: bytes, module: str, is_package: bool) -> Iterator[str]:
    """Every module name ``source`` imports, absolute (``from x import y`` gives ``x`` and
    ``x.y``: ``y`` may be a submodule). Import statements are found by their lines, not by
    parsing (ten times cheaper): a line in a docstring that reads like one can only add a
    module, never lose one."""
    text = source.decode("utf-8", errors="replace")
    package = module if is_package else module.rpartition(".")[0]
    for match in _FROM.finditer(text):
        target = match[1]
        level = len(target) - len(target.lstrip("."))
        if level:
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - level + 1])
            rest = target[level:]
            name = f"{base}.{rest}" if rest else base
        else:
            name = target
        yield name
        yield from (f"{name}.{alias}" for alias in _names(match[2]))
    for match in _IMPORT.finditer(text):
        yield from _names(match[1])


def family_files(tree: Tree, package: str, tops: Iterable[str]) -> list[PurePosixPath]:
    """The files of the family whose declaration is the module ``package`` (see the module
    docstring), in path order."""
    own = set(tops) | {package.split(".", maxsplit=1)[0]}
    start = _module_file(tree, package)
    if start is None:
        raise FileNotFoundError(f"no module {package} in the tree")
    files: set[PurePosixPath] = set()
    directories: set[PurePosixPath] = set()
    if start.name == "__init__.py":
        directories.add(start.parent)
    queue = [(package, start)]
    seen = {package}
    while queue:
        module, path = queue.pop()
        files.add(path)
        if len(path.parts) > 2:  # inside a package below the top level: its data too
            directories.add(path.parent)
        source = tree.read(path) or b""
        for name in _imports(source, module, path.name == "__init__.py"):
            if name in seen or name.split(".")[0] not in own:
                continue
            seen.add(name)
            found = _module_file(tree, name)
            if found is not None:
                queue.append((name, found))
    for directory in directories:
        files.update(tree.listing(directory))
    return sorted(path for path in files if not _skipped(path))


def digest_of_tree(tree: Tree, package: str, tops: Iterable[str] = PROJECT_PACKAGES) -> str:
    """The digest of the family declared in ``package`` as ``tree`` holds it."""
    tree = Tree(functools.cache(tree.read), tree.listing)  # each file read once
    sha = hashlib.sha256()
    for path in family_files(tree, package, tops):
        data = tree.read(path) or b""
        sha.update(f"{path}\0{len(data)}\0".encode())
        sha.update(data)
    return sha.hexdigest()[:DIGEST_CHARS]


def installed_tree(package: str) -> Tree:
    """The tree the running process imports ``package`` (and the project's packages) from."""
    roots: dict[str, Path] = {}
    for top in {*PROJECT_PACKAGES, package.split(".", maxsplit=1)[0]}:
        spec = importlib.util.find_spec(top)
        if spec is not None and spec.submodule_search_locations:
            roots[top] = Path(next(iter(spec.submodule_search_locations))).parent
        elif spec is not None and spec.origin:  # a top-level plugin module, not a package
            roots[top] = Path(spec.origin).parent

    def real(path: PurePosixPath) -> Path | None:
        root = roots.get(path.parts[0].removesuffix(".py")) if path.parts else None
        return root / path if root is not None else None

    def read(path: PurePosixPath) -> bytes | None:
        found = real(path)
        return found.read_bytes() if found is not None and found.is_file() else None

    def listing(directory: PurePosixPath) -> list[PurePosixPath]:
        found = real(directory)
        if found is None or not found.is_dir():
            return []
        return [
            directory / PurePosixPath(*p.relative_to(found).parts)
            for p in found.rglob("*")
            if p.is_file()
        ]

    return Tree(read, listing)


def declaration_module(family: Family) -> str:
    """The module that declares ``family`` (its ``load``'s module)."""
    module = getattr(family.load, "__module__", None)
    if not module or module not in sys.modules:
        raise LookupError(f"family {family.name!r}: its declaration's module is not imported")
    return str(module)


@dataclass(frozen=True)
class Stamp:
    """Who scored a result (``name@version``) and the digest of its family's source and data."""

    scorer: str
    digest: str


class Provenance:
    """The stamps of a registry's environments and verifiers, each computed once per process.

    Also a Prometheus collector: ``envserver_family_code_info{family, digest} 1`` for every
    family a stamp was given for, so a dashboard shows what scored a run's rewards."""

    def __init__(self, families: Mapping[str, Family]) -> None:
        self.families = families
        self._digests: dict[str, str] = {}
        self._stamps: dict[tuple[str, str], Stamp] = {}

    def family_digest(self, family: Family) -> str:
        """``family``'s digest (see the module docstring), computed once."""
        if family.name not in self._digests:
            module = declaration_module(family)
            self._digests[family.name] = digest_of_tree(installed_tree(module), module)
        return self._digests[family.name]

    def warm(self, identifiers: Iterable[str]) -> None:
        """Compute the digests of the families of ``identifiers`` (environment ids and verifier
        names) now, where a request would otherwise wait for them."""
        for identifier in identifiers:
            self._digest_of(identifier)

    def _digest_of(self, identifier: str) -> str:
        family = owner(list(self.families.values()), identifier)
        return self.family_digest(family) if family is not None else ""

    def of_verifier(self, verifier: Verifier) -> Stamp:
        """The stamp of a score ``verifier`` gave against a caller's reference."""
        key = ("verifier", verifier.name)
        stamp = self._stamps.get(key)
        if stamp is None:
            scorer = f"{verifier.name}@{verifier.version}"
            stamp = self._stamps[key] = Stamp(scorer, self._digest_of(verifier.name))
        return stamp

    def of_env(self, env: Environment, verifier: Verifier | None) -> Stamp:
        """The stamp of a score of ``env`` (by task id or by a step): its verifier's
        ``name@version`` where it names one this server serves, else the environment's own
        ``id@version`` (it scores its steps itself); the digest of the environment's family,
        whose imports include the verifier's modules."""
        spec = env.spec
        key = ("env", f"{spec.id}@{spec.version}")
        stamp = self._stamps.get(key)
        if stamp is None:
            scorer = (
                f"{verifier.name}@{verifier.version}"
                if verifier is not None
                else f"{spec.id}@{spec.version}"
            )
            stamp = self._stamps[key] = Stamp(scorer, self._digest_of(spec.id))
        return stamp

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "envserver_family_code_info",
            "The digest of each family's source and data that scored results here (always 1).",
            labels=["family", "digest"],
        )
        for name, digest in sorted(self._digests.items()):
            info.add_metric([name, digest], 1.0)
        yield info
