"""A family is one declaration (``environments.family``): the registry reads nothing else, checks
what it brings when it registers (a malformed family fails with its name), keys what is disabled
by typed ids, and is built from the settings it is given, in the server and in every worker."""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import replace
from importlib.metadata import entry_points, metadata, packages_distributions
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from packaging.requirements import Requirement

from environments.family import (
    ENTRY_POINTS,
    Contents,
    EnvironmentId,
    Family,
    FamilyError,
    FamilyName,
    OptionValue,
    VerifierName,
)
from envserver.app import create_app
from envserver.config import Settings
from envserver.families import declared
from envserver.registry import Disabled, UnknownEnvironment, discover
from tests.plugins import drawn
from tests.server import ROOT
from verifiers.base import NoOptions, Unavailable, Verifier
from verifiers.score import Score

WHY = Unavailable("a reason", "a fix")


def exact(response: str, reference: Any, options: Any) -> Score:
    del options
    return Score.ok(float(response == reference))


def checker(name: str) -> Verifier:
    return Verifier(name, "1", "Exact match.", exact, example=("a", "a"))


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., str]]:
    """Makes a plugin module exporting ``FAMILY = Family(**declared)``; returns its name."""
    made = 0

    def make(**fields: Any) -> str:
        nonlocal made
        made += 1
        module = types.ModuleType(f"family_plugin_{made}")
        module.FAMILY = Family(**fields)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        return module.__name__

    yield make


def contents(**fields: Any) -> Callable[[], Contents]:
    return lambda: Contents(**fields)


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        (
            {"verifiers": (checker("x.one"), "x.two")},
            "family 'x': verifiers[1] is a str, not a Verifier",
        ),
        ({"verifiers": [checker("y")]}, "family 'x': verifier 'y' is outside its namespace"),
        (
            {"environments": (drawn.CounterEnv(),)},
            "family 'x': environment 'test.counter' is outside its namespace",
        ),
        ({"environments": drawn.CounterEnv()}, "family 'x': environments is a CounterEnv"),
        (
            {"renderers": [drawn.CounterRenderer()]},
            "family 'x': renderers is a list, not a mapping",
        ),
        ({"extension": object()}, "family 'x': extension is an object, not an Extension"),
        ({"search": "moves"}, "family 'x': search is a str, not a SearchSpace"),
        (
            {"unavailable": {"x.one": WHY}},
            "family 'x': unavailable key 'x.one' is a str, not an EnvironmentId",
        ),
        (
            {"unavailable": {EnvironmentId("x/none"): WHY}},
            "family 'x': unavailable names 'x/none', none of its environments",
        ),
        (
            {"verifiers": (checker("x.one"), checker("x.one"))},
            "family 'x': verifier 'x.one' is declared twice",
        ),
    ],
)
def test_a_malformed_family_fails_to_register_with_its_name(
    plugin: Callable[..., str], fields: dict[str, Any], error: str
) -> None:
    with pytest.raises(FamilyError, match=f"^{re.escape(error)}"):
        discover([plugin(name="x", load=contents(**fields))])


def test_what_a_loader_returns_and_raises_is_reported_with_the_familys_name(
    plugin: Callable[..., str],
) -> None:
    with pytest.raises(FamilyError, match=r"^family 'x': what load\(\) returned is a dict"):
        discover([plugin(name="x", load=dict)])

    def misspelt() -> Contents:
        return Contents(verifier=(checker("x"),))  # type: ignore[call-arg]

    with pytest.raises(
        FamilyError, match=r"^family 'x': loading it failed: TypeError: .*'verifier'"
    ):
        discover([plugin(name="x", load=misspelt)])


def test_a_declaration_of_the_wrong_type_fails_where_it_is_made() -> None:
    load = contents()
    with pytest.raises(FamilyError, match=r"^family 'x': requires is a list, not a tuple"):
        Family(name="x", load=load, requires=["z3"])  # type: ignore[arg-type]
    with pytest.raises(FamilyError, match=r"^family 'x': requires names modules but install"):
        Family(name="x", load=load, requires=("z3",))
    with pytest.raises(FamilyError, match=r"^family 'x': suite is a str, not a Path"):
        Family(name="x", load=load, suite="redteam.toml")  # type: ignore[arg-type]
    with pytest.raises(FamilyError, match=r"^family 'x y': the name must be"):
        Family(name="x y", load=load)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'suites'"):
        Family(name="x", load=load, suites=None)  # type: ignore[call-arg]


def test_a_plugin_module_without_a_declaration_is_an_error_naming_it(
    monkeypatch: pytest.MonkeyPatch, plugin: Callable[..., str]
) -> None:
    bare = types.ModuleType("bare_plugin")
    bare.VERIFIER = checker("bare")  # type: ignore[attr-defined]  (today's names are not read)
    monkeypatch.setitem(sys.modules, "bare_plugin", bare)
    with pytest.raises(FamilyError, match=r"^plugin module 'bare_plugin' exports no FAMILY"):
        discover(["bare_plugin"])
    with pytest.raises(FamilyError, match=r"^plugin module 'no_such_plugin' cannot be imported"):
        discover(["no_such_plugin"])
    twice = [plugin(name="x", load=contents()), plugin(name="x", load=contents())]
    with pytest.raises(FamilyError, match=r"^family 'x' is declared twice"):
        discover(twice)


def test_what_an_environment_declares_twice_must_agree(plugin: Callable[..., str]) -> None:
    # The spec names its family and (single-turn or not) its kind; the declaration says both.
    with pytest.raises(FamilyError, match=r"environment 'test.counter' says its family is"):
        discover([plugin(name="test", load=contents(environments=(drawn.CounterEnv(),)))])
    single = drawn.CounterEnv()
    single.spec = replace(single.spec, kind="single_turn")  # type: ignore[misc]
    with pytest.raises(FamilyError, match=r"is single_turn but does not score a single response"):
        discover([plugin(name="test.counter", load=contents(environments=(single,)))])


def test_an_id_belongs_to_the_family_with_the_longest_name_it_starts_with(
    plugin: Callable[..., str],
) -> None:
    registry = discover(
        [
            plugin(name="x", load=contents(verifiers=(checker("x"), checker("x.z")))),
            plugin(name="x.y", load=contents(verifiers=(checker("x.y"), checker("x.y.z")))),
        ]
    )
    assert {"x", "x.z", "x.y", "x.y.z"} <= set(registry.verifiers)
    # x.y.w would be x.y's: x may not bring it.
    with pytest.raises(FamilyError, match=r"verifier 'x.y.w' belongs to family 'x.y' "):
        discover(
            [
                plugin(name="x", load=contents(verifiers=(checker("x.y.w"),))),
                plugin(name="x.y", load=contents()),
            ]
        )


def test_what_is_disabled_is_keyed_by_typed_ids_and_answers_for_its_namespace(
    plugin: Callable[..., str],
) -> None:
    counter = drawn.CounterEnv()
    registry = discover(
        [
            plugin(
                name="absent",
                load=contents(),
                requires=("envserver_tests_missing_dependency",),
                install="absent-extra",
            ),
            plugin(
                name="test.counter",
                load=contents(
                    environments=(counter,),
                    verifiers=(checker("test.counter.exact"), checker("test.counter.other")),
                    unavailable={
                        OptionValue("test.counter", "shape", "square"): WHY,
                        VerifierName("test.counter.other"): WHY,
                    },
                ),
            ),
        ]
    )
    missing = registry.disabled[FamilyName("absent")]
    assert missing.fix == "pip install 'absent-extra'"
    assert "envserver_tests_missing_dependency" in missing.reason
    assert registry.disabled_reason("absent/any") is missing
    with pytest.raises(Disabled):
        registry.verifier("absent.check")
    with pytest.raises(Disabled):
        registry.verifier("test.counter.other")
    assert "test.counter.exact" in registry.verifiers
    # An option value is withheld alone: the environment serves.
    assert registry.env("test.counter") is counter
    with pytest.raises(UnknownEnvironment):
        registry.env("absentee")  # not in the namespace of "absent"
    # The wire's names are the ids' own.
    assert {str(key) for key in registry.disabled} >= {
        "absent",
        "test.counter?shape=square",
        "test.counter.other",
    }
    with pytest.raises(
        FamilyError, match=re.escape("test.counter?colour=red: 'test.counter' has no such")
    ):
        discover(
            [
                plugin(
                    name="test.counter",
                    load=contents(
                        environments=(counter,),
                        unavailable={OptionValue("test.counter", "colour", "red"): WHY},
                    ),
                )
            ]
        )


def test_an_environment_scores_with_a_verifier_some_family_serves(
    plugin: Callable[..., str],
) -> None:
    from environments.single_turn import SingleTurnEnvironment, Task, TaskFamily

    class Orphan(TaskFamily[NoOptions]):
        id = "x/orphan"
        version = "1"
        description = "A task scored by a verifier no family serves."
        verifier = checker("nobody")
        action_format = "text"

        def generate(self, seed: int, options: NoOptions) -> Task:
            return Task(prompt="a", reference="a")

        def expert_response(self, task: Task) -> str:
            return "a"

    load = contents(environments=(SingleTurnEnvironment(Orphan()),))
    with pytest.raises(FamilyError, match=r"scores with verifier 'nobody', which no family serves"):
        discover([plugin(name="x", load=load)])


def test_the_built_in_families_come_in_through_their_entry_points() -> None:
    # One way in: each family package has an entry point named for it, and no other is read.
    packages = {path.parent.name for path in (ROOT / "environments").glob("*/__init__.py")}
    points = {point.name: point.value for point in entry_points(group=ENTRY_POINTS)}
    assert points == {name: f"environments.{name}:FAMILY" for name in packages}
    assert [family.name for family in declared()] == sorted(packages)


def test_each_install_line_installs_what_its_family_requires() -> None:
    # The extra's requirements provide every module the family names (the hint is no guess).
    requirements = [Requirement(line) for line in metadata("envserver").get_all("Requires-Dist")]
    providers = packages_distributions()
    for family in declared():
        if not family.requires:
            continue
        extra = re.fullmatch(r"envserver\[(\w+)\]", family.install)
        assert extra, (family.name, family.install)
        names = {
            req.name.lower().replace("_", "-")
            for req in requirements
            if req.marker is not None and req.marker.evaluate({"extra": extra.group(1)})
        }
        for module in family.requires:
            dists = {d.lower().replace("_", "-") for d in providers.get(module, [])}
            assert dists & names, f"{family.name}: {module} is not installed by {family.install}"


def test_create_app_serves_the_plugins_of_the_settings_it_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not the process's environment: the server and its pool's workers load what settings name.
    monkeypatch.delenv("ENVSERVER_PLUGINS", raising=False)
    settings = Settings(
        plugins=["tests.plugins.faulty"],
        data_dir=tmp_path,
        pool_workers=1,
        warm_up=False,
        sandbox_backend="none",
    )
    with TestClient(create_app(settings)) as http:
        catalogue = http.get("/v1/envs").json()
        assert "test.sleep" in {verifier["name"] for verifier in catalogue["verifiers"]}
        item = {"response": "7", "reference": "7"}
        answer = http.post("/v1/verify", json={"verifier": "test.sleep", "items": [item]})
        assert answer.status_code == 200, answer.text
        result = answer.json()["results"][0]
        assert (result["status"], result["reward"]) == ("ok", 1.0)


def test_a_second_discovery_gives_the_fork_server_the_families_alike() -> None:
    """The CLI's preflight discovers the families, then the app does: the second discovery
    imports nothing new, and once listed nothing for the pool's fork server to import."""
    first, second = discover(), discover()
    assert second.modules == first.modules
    for family in second.families.values():
        if not any(family.name == str(name) for name in second.disabled):
            assert family.load.__module__ in second.modules, family.name
