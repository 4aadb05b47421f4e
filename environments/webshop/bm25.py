"""BM25 search over the catalogue, as the original's pyserini/Lucene index ranks it.

Lucene's parameters (k1 0.9, b 0.4, the "lucene" BM25 variant), Lucene's English stop words and
the Porter stemmer (PyStemmer's ``porter`` algorithm, as Lucene's ``PorterStemFilter``), scored by
``bm25s``. Ties rank by document order (Lucene's doc-id order). The index is built once per
catalogue and persisted under the cache directory; other processes memory-map it.
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer

from environments.webshop.catalogue import Catalogue

TOP_N = 50
RESULTS_PER_PAGE = 10
K1 = 0.9
B = 0.4
ANALYZER_VERSION = "1"
LUCENE_STOPWORDS = frozenset(
    ("a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
     "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
     "they", "this", "to", "was", "will", "with")
)  # fmt: skip
"""Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (33 words)."""

# Lucene's StandardTokenizer keeps single characters and digits; a possessive "'s" is split off
# and, being one letter, kept like EnglishPossessiveFilter would drop it: drop it explicitly.
_WORDS = re.compile(r"(?u)\w+")


class Analyzer:
    """Lower-case, split into words, drop stop words and possessive 's', Porter-stem."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("porter")
        self._stems: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        """The index terms of ``text``, in order, duplicates kept (they count as term frequency)."""
        stems = self._stems
        terms = []
        for word in _WORDS.findall(text.lower()):
            if word in LUCENE_STOPWORDS or word == "s":
                continue
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = self._stemmer.stemWord(word)
            terms.append(stem)
        return terms


class SearchIndex:
    """A persisted BM25 index: ``search(keywords)`` -> document indices, best first."""

    def __init__(self, retriever: bm25s.BM25, directory: Path) -> None:
        self._retriever = retriever
        self._vocab: dict[str, int] = retriever.vocab_dict
        self._analyzer = Analyzer()
        self.directory = directory

    @property
    def num_docs(self) -> int:
        """How many documents the index holds."""
        return int(self._retriever.scores["num_docs"])

    def search(self, keywords: Iterable[str], top_n: int = TOP_N) -> list[int]:
        """The top ``top_n`` document indices for the space-joined ``keywords`` (only documents
        that match at least one term, as Lucene returns them)."""
        terms = self._analyzer(" ".join(keywords))
        ids = [self._vocab[t] for t in terms if t in self._vocab]
        if not ids:
            return []
        scores = self._retriever.get_scores_from_ids(ids)
        matching = np.flatnonzero(scores > 0)
        if len(matching) > top_n:
            # Keep every document tied with the n-th score so the doc-id tie-break is exact.
            candidate = scores[matching]
            kth = np.partition(candidate, len(candidate) - top_n)[len(candidate) - top_n]
            matching = matching[candidate >= kth]
        order = np.lexsort((matching, -scores[matching]))
        return [int(i) for i in matching[order[:top_n]]]

    @classmethod
    def build(cls, catalogue: Catalogue, directory: Path) -> SearchIndex:
        """Analyse every product's search text, index it with bm25s and save it to
        ``directory`` (written beside it, then renamed into place)."""
        analyzer = Analyzer()
        vocab: dict[str, int] = {}
        corpus: list[list[int]] = []
        for product in catalogue.products():
            terms = analyzer(product.search_text())
            corpus.append([vocab.setdefault(t, len(vocab)) for t in terms])
        retriever = bm25s.BM25(k1=K1, b=B, method="lucene")
        retriever.index((corpus, vocab), show_progress=False)
        del corpus
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=directory.parent))
        retriever.save(str(staging), show_progress=False)
        (staging / "catalogue.json").write_text(
            json.dumps({"fingerprint": catalogue.fingerprint, "documents": len(catalogue)})
        )
        staging.replace(directory)
        return cls.load(directory)

    @classmethod
    def load(cls, directory: Path) -> SearchIndex:
        """The index saved in ``directory``, memory-mapped."""
        retriever = bm25s.BM25.load(str(directory), mmap=True, show_progress=False)
        return cls(retriever, directory)

    @classmethod
    def open(cls, catalogue: Catalogue, cache_dir: Path) -> SearchIndex:
        """The catalogue's index from ``cache_dir``, built there first if missing. A file lock
        makes concurrent workers wait for one build instead of racing."""
        directory = cache_dir / "index" / f"{catalogue.fingerprint}-a{ANALYZER_VERSION}"
        if (directory / "catalogue.json").exists():
            return cls.load(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        with (directory.parent / f"{directory.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if (directory / "catalogue.json").exists():
                return cls.load(directory)
            if directory.exists():  # a build that died half-way
                shutil.rmtree(directory)
            return cls.build(catalogue, directory)


def index_stats(index: SearchIndex) -> dict[str, Any]:
    """Size on disk and document count, for benchmarks and the README."""
    size = sum(f.stat().st_size for f in index.directory.iterdir() if f.is_file())
    return {"documents": index.num_docs, "bytes_on_disk": size, "when": time.time()}
