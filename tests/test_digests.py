"""The digest of a family's code and data (``envserver/digests.py``): which files it covers, and
that it moves exactly when what scores could change. The stamps on live results are checked in
``tests/test_curriculum_server.py``."""

from __future__ import annotations

from pathlib import PurePosixPath

from envserver.digests import (
    PROJECT_PACKAGES,
    Tree,
    declaration_module,
    digest_of_tree,
    family_files,
    installed_tree,
)
from envserver.families import declared

FILES = {
    "fam/__init__.py": "def _load():\n    from fam.family import TASKS\n    return TASKS\n",
    "fam/family.py": "from verifiers.helper import check\nfrom . import tables\nTASKS = 1\n",
    "fam/tables.py": "import json\n",
    "fam/data/table.json": '{"a": 1}',
    "fam/README.md": "# fam",
    "fam/redteam.toml": "[[case]]",
    "fam/templates/fam/page.html": "<p>",
    "verifiers/__init__.py": "",
    "verifiers/helper.py": "from verifiers.score import Score\n",
    "verifiers/score.py": "class Score: ...\n",
    "verifiers/unrelated.py": "X = 1\n",
    "sandbox/__init__.py": "",
}


def _tree(files: dict[str, str]) -> Tree:
    paths = {PurePosixPath(name): text.encode() for name, text in files.items()}
    return Tree(paths.get, lambda folder: [p for p in paths if folder in p.parents])


def test_the_files_are_the_package_and_what_it_imports() -> None:
    files = {str(p) for p in family_files(_tree(FILES), "fam", ("verifiers", "sandbox"))}
    assert files == {
        "fam/__init__.py",
        "fam/family.py",
        "fam/tables.py",
        "fam/data/table.json",
        "verifiers/helper.py",  # imported by the family, inside a function or not
        "verifiers/score.py",  # imported by what the family imports
    }


def test_the_digest_moves_with_code_and_data_and_not_with_docs() -> None:
    before = digest_of_tree(_tree(FILES), "fam")
    assert before == digest_of_tree(_tree(FILES), "fam")
    assert len(before) == 16
    changed = {
        "verifiers/score.py": "class Score: pass\n",
        "verifiers/helper.py": FILES["verifiers/helper.py"] + "# one more line\n",
        "fam/data/table.json": '{"a": 2}',
        "fam/tables.py": "import json  # edited\n",
    }
    for path, text in changed.items():
        assert digest_of_tree(_tree({**FILES, path: text}), "fam") != before, path
    unchanged = {
        "fam/README.md": "# fam, documented",
        "fam/redteam.toml": "[[case]]\n[[case]]",
        "fam/templates/fam/page.html": "<p>a page",
        "verifiers/unrelated.py": "X = 2\n",
    }
    for path, text in unchanged.items():
        assert digest_of_tree(_tree({**FILES, path: text}), "fam") == before, path
    # A file moved to another path is another tree, even with the same bytes.
    moved = dict(FILES)
    moved["fam/data/other.json"] = moved.pop("fam/data/table.json")
    assert digest_of_tree(_tree(moved), "fam") != before


def test_the_math_family_covers_its_verifier_and_the_shared_modules() -> None:
    family = next(f for f in declared([]) if f.name == "math")
    module = declaration_module(family)
    files = {str(p) for p in family_files(installed_tree(module), module, PROJECT_PACKAGES)}
    assert {
        "environments/math/family.py",
        "verifiers/math.py",
        "verifiers/math_hedges.py",
        "verifiers/score.py",
        "environments/single_turn.py",
    } <= files
    assert not any(name.endswith((".md", "redteam.toml")) for name in files)
    assert not any(name.startswith(("envserver/", "clients/")) for name in files)
    assert not any(name.startswith("environments/sva/") for name in files)
