"""The Python runtime a run sees, and how it is made reachable without showing the host's layout.

Full isolation: the worker's minimal root gets the interpreter and its libraries bound read-only
at neutral paths under ``/opt/envserver-runtime`` (``python`` for the interpreter's installation
unless it lives under ``/usr``, ``site-packages`` for the server's virtual environment, ``app``
for this package alone), and the worker re-executes itself from there (``-S -P``: no ``site``
hooks, no current directory on ``sys.path``). So ``sys.executable``, ``sys.path``, module files,
``/proc/self/maps``, the environment and ``/`` name no home directory, checkout or venv.
The binds are opened by the launcher with its host uid, so an installation under a directory
the sandbox's uids cannot enter (a 0700 ``/root``) is reachable all the same.

Weak isolation has no mount namespace: where the run's uid cannot enter a directory on
``sys.path`` (Python installed under a 0700 home), the worker opens those directories itself
and points ``sys.path`` (and loaded packages' ``__path__``) at ``/proc/self/fd/<n>``, descriptors
every run inherits (``bridge``). ``probe`` then checks that imports really work as the run's uid.
"""

from __future__ import annotations

import os
import site
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = "/opt/envserver-runtime"
PACKAGE = Path(__file__).resolve().parent  # this package: the worker's own code
BRIDGE_FD_BASE = 900  # weak isolation's bridged directories, kept open in every run


def _within(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


@dataclass(frozen=True)
class Runtime:
    """Host directories bound read-only into the worker's root, and how to start Python there."""

    binds: tuple[tuple[str, str], ...]  # (host path, path inside)
    python: str  # the interpreter, inside
    site: tuple[str, ...]  # site-packages directories, inside
    library_path: str  # LD_LIBRARY_PATH the interpreter needs inside ('' if none)

    @property
    def app(self) -> str:
        """The directory holding only this package, inside (first on the worker's path)."""
        return f"{ROOT}/app"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """The re-executed worker's environment."""
        env = {**base, "PYTHONPATH": self.app, "PYTHONDONTWRITEBYTECODE": "1"}
        if self.library_path:
            env["LD_LIBRARY_PATH"] = self.library_path
        return env

    def argv(self, arguments: list[str]) -> list[str]:
        """The re-executed worker's command line."""
        return [self.python, "-S", "-P", "-m", "sandbox.zygote", *arguments]


def neutral() -> Runtime:
    """This interpreter's runtime, laid out under ``ROOT`` (``/usr`` stays where it is)."""
    base = os.path.realpath(sys.base_prefix)
    binds: list[tuple[str, str]] = [(str(PACKAGE), f"{ROOT}/app/{PACKAGE.name}")]

    def inside(path: str) -> str:
        if _within(path, "/usr"):
            return path
        if _within(path, base):
            return f"{ROOT}/python{path[len(base) :]}"
        raise ValueError(path)

    if not _within(base, "/usr"):
        binds.append((base, f"{ROOT}/python"))
    sites = []
    for number, host in enumerate(_site_dirs()):
        try:
            sites.append(inside(host))
        except ValueError:
            target = f"{ROOT}/site-packages" + (f"-{number}" if number else "")
            binds.append((host, target))
            sites.append(target)
    executable = os.path.realpath(sys.executable)
    if not _within(executable, base):
        executable = f"{base}/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    libdir = Path(base, "lib")
    shared = not _within(base, "/usr") and any(libdir.glob("libpython*.so*"))
    return Runtime(
        binds=tuple(binds),
        python=inside(executable),
        site=tuple(sites),
        library_path=inside(str(libdir)) if shared else "",
    )


def _site_dirs() -> list[str]:
    """The server's site-packages directories (its venv's, or the interpreter's own)."""
    found: list[str] = []
    for path in site.getsitepackages():
        real = os.path.realpath(path)
        if Path(real).is_dir() and real not in found:
            found.append(real)
    return found


def enter(site_dirs: list[str]) -> None:
    """In the re-executed worker (``-S``): the site-packages directories after the standard
    library, and the builtins ``site`` would have added (``exit``, ``quit``, ``help``...)."""
    sys.path.extend(path for path in site_dirs if path not in sys.path)
    site.setquit()
    site.setcopyright()
    site.sethelper()


# -- weak isolation ----------------------------------------------------------------------------


def unreachable(paths: list[str], uid: int) -> list[str]:
    """Those of ``paths`` (directories) that ``uid`` cannot list, checked as that uid."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            flags = ""
            for path in paths:
                try:
                    next(Path(path).iterdir(), None)
                    flags += "0"
                except OSError:
                    flags += "1"
            os.write(write_fd, flags.encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as reader:
        flags = reader.read().decode()
    os.waitpid(pid, 0)
    if len(flags) != len(paths):
        raise OSError("could not check which directories the sandbox's uid can read")
    return [path for path, flag in zip(paths, flags, strict=True) if flag == "1"]


def bridge(paths: list[str]) -> list[int]:
    """Reach ``paths`` through descriptors of this process (see the module's docstring): the
    descriptors, which every run must keep open."""
    mapping: dict[str, str] = {}
    fds = []
    for number, path in enumerate(paths):
        opened = os.open(path, os.O_PATH | os.O_DIRECTORY)
        fd = os.dup2(opened, BRIDGE_FD_BASE + number, inheritable=False)
        os.close(opened)
        fds.append(fd)
        mapping[path] = f"/proc/self/fd/{fd}"

    def moved(entry: str) -> str:
        for old, new in mapping.items():
            if _within(entry, old):
                return new + entry[len(old) :]
        return entry

    sys.path[:] = [moved(entry) for entry in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [moved(entry) for entry in search]
    sys.path_importer_cache.clear()
    return fds


def sys_path_dirs() -> list[str]:
    """The directories on ``sys.path`` (the stdlib's zip file and import hooks left out)."""
    return [path for path in sys.path if path and Path(path).is_dir()]
