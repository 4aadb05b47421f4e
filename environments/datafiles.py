"""Reading the data files families ship (through ``importlib.resources``) or are pointed at.

Shipped data is compressed (xz); files a user adds may be plain, ``.gz`` or ``.xz``. Both are
``Traversable``s, so a package installed as files or from a zip reads the same way.
"""

from __future__ import annotations

import gzip
import io
import lzma
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources.abc import Traversable
from typing import IO, TextIO

COMPRESSIONS = ("", ".gz", ".xz")
"""The suffixes a data file may carry after its own: none, gzip or xz."""
READ_ERRORS: tuple[type[Exception], ...] = (OSError, EOFError, ValueError, lzma.LZMAError)
"""What opening or reading a data file may raise: unreadable (OSError), corrupt or truncated
(gzip's OSError, ``lzma.LZMAError``, EOFError), not UTF-8 (UnicodeDecodeError, a ValueError)."""


@contextmanager
def open_text(path: Traversable, *, newline: str | None = None) -> Iterator[TextIO]:
    """``path`` as UTF-8 text, decompressed by its suffix (``.gz``, ``.xz`` or none). Opening or
    reading it raises one of ``READ_ERRORS``."""
    with path.open("rb") as raw, _text(raw, path.name, newline) as text:
        yield text


def _text(raw: IO[bytes], name: str, newline: str | None) -> TextIO:
    if name.endswith(".gz"):
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="utf-8", newline=newline)
    if name.endswith(".xz"):
        return io.TextIOWrapper(lzma.LZMAFile(raw), encoding="utf-8", newline=newline)
    return io.TextIOWrapper(raw, encoding="utf-8", newline=newline)
