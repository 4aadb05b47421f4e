"""The families' extension contract (``environments.extension``): the core builds a family's
settings with its own data directory, opens the family's resources in the process that serves
and closes them, and the family keeps no state of its own; the layers import only downwards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.testclient import TestClient

from environments.evo.resources import EvoResources
from environments.extension import RESOURCES_STATE, injected
from envserver.config import Settings
from envserver.registry import Registry, UnknownEnvironment, discover
from tests.server import ROOT


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.delenv("ENVSERVER_EVO_STORE", raising=False)
    return discover()


def test_the_core_opens_a_familys_resources_in_its_data_dir_and_closes_them(
    registry: Registry, tmp_path: Path
) -> None:
    with pytest.raises(UnknownEnvironment):
        registry.env("evo/construct")  # nothing of the store is served before it is open
    registry.open(Settings(data_dir=tmp_path))
    evo = registry.resources["evo"]
    assert isinstance(evo, EvoResources)
    assert evo.settings.data_dir == tmp_path
    assert (tmp_path / "evo.sqlite").is_file()
    assert registry.env("evo/construct").spec.id == "evo/construct"
    listed = {env.spec.id for env in registry.dynamic_envs()}
    assert "evo/longest_increasing_subsequence" in listed  # a seed, planted in the new store
    registry.close()
    assert not registry.resources and not registry.dynamic
    with pytest.raises(UnknownEnvironment):
        registry.env("evo/construct")


def test_a_familys_own_variables_reach_its_settings(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "elsewhere" / "pool.sqlite"
    monkeypatch.setenv("ENVSERVER_EVO_STORE", f"sqlite:///{store}")
    monkeypatch.setenv("ENVSERVER_EVO_PASS_BAND", "0.1,0.9")
    registry.open(Settings(data_dir=tmp_path / "data"))
    try:
        evo = registry.resources["evo"]
        assert isinstance(evo, EvoResources)
        assert evo.settings.pass_band == (0.1, 0.9)
        assert store.is_file() and not (tmp_path / "data" / "evo.sqlite").exists()
    finally:
        registry.close()


def test_an_unreadable_family_setting_stops_the_open(
    registry: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENVSERVER_EVO_PASS_BAND", "0.9,0.1")
    with pytest.raises(ValueError, match="pass band"):
        registry.open(Settings(data_dir=tmp_path))
    assert not registry.resources and not registry.dynamic


def test_resources_open_once_per_process(registry: Registry, tmp_path: Path) -> None:
    registry.open(Settings(data_dir=tmp_path))
    try:
        with pytest.raises(RuntimeError, match="open already"):
            registry.open(Settings(data_dir=tmp_path))
    finally:
        registry.close()


def test_a_familys_routes_get_the_resources_the_core_opened(
    registry: Registry, tmp_path: Path
) -> None:
    registry.open(Settings(data_dir=tmp_path))
    try:
        app = FastAPI()
        setattr(app.state, RESOURCES_STATE, list(registry.resources.values()))
        for router in registry.routers():
            app.include_router(router)
        with TestClient(app) as http:
            listed = {env["id"] for env in http.get("/v1/evo/envs").json()}
            retired = http.post("/v1/evo/envs/latin_square_completion/retire")
            assert retired.status_code == 200 and retired.json()["retired"]
    finally:
        registry.close()
    assert "evo/latin_square_completion" in listed
    store = tmp_path / "evo.sqlite"
    registry.open(Settings(data_dir=tmp_path))  # the same store: the retirement was written
    try:
        served = {env.spec.id for env in registry.dynamic_envs()}
    finally:
        registry.close()
    assert store.is_file() and "evo/latin_square_completion" not in served


def test_a_route_whose_resources_are_not_open_here_fails_naming_them() -> None:
    app = FastAPI()
    setattr(app.state, RESOURCES_STATE, [])
    request = Request({"type": "http", "app": app})
    with pytest.raises(RuntimeError, match=r"no EvoResources is open in this process"):
        injected(EvoResources)(request)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize(
    ("layer", "above"),
    [
        ("environments", {"envserver", "clients"}),
        ("verifiers", {"envserver", "clients", "environments"}),
        ("sandbox", {"envserver", "clients", "environments", "verifiers"}),
    ],
)
def test_a_layer_imports_nothing_above_it(layer: str, above: set[str]) -> None:
    """A family's ``cli.py`` is a command-line program run by ``envserver <family>``, never
    imported by the layers: it may drive a server through the HTTP client (Tamarin's ``prove``)."""
    offending = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & allowed)
        for path in sorted((ROOT / layer).rglob("*.py"))
        for allowed in [above - {"clients"} if path.name == "cli.py" else above]
        if _imports(path) & allowed
    }
    assert not offending, offending
