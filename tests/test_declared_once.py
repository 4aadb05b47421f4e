"""Each capability declared once (issue 39, item 4): an environment's family is its declaration's
(the family whose namespace holds the id, also where the name has a ``/``), never the id cut at
its first ``/``, for the catalogue and the metric labels alike; whether an environment scores a
single response is its spec's ``kind``, for the service as for the playground; SVA's one check has
one name; its cache is the standard one and keeps no time-out."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import httpx
import pytest

from envserver.catalogue import build_catalogue
from envserver.registry import discover
from envserver.service import Service
from tests.conftest import make_server
from tests.plugins.nested import NAME

PLUGIN = "tests.plugins.nested"


def test_a_family_is_named_by_its_declaration_not_by_its_ids() -> None:
    # Its single-turn environment states no family: cut at the first "/", its id said
    # "test.nested", which the registry refused as disagreeing with the declaration.
    registry = discover([PLUGIN])
    assert registry.envs[f"{NAME}/echo"].spec.family == ""
    catalogue = build_catalogue(registry)
    (env,) = [env for env in catalogue.envs if env.id == f"{NAME}/echo"]
    (verifier,) = [v for v in catalogue.verifiers if v.name == f"{NAME}.exact"]
    assert env.family == verifier.family == NAME
    assert {env.family for env in catalogue.envs if env.id == "math"} == {"math"}
    service = cast(Service, SimpleNamespace(registry=registry))
    # An id the family adds while serving is labelled by the declared family, bounded.
    assert Service.label(service, f"{NAME}/added-later") == f"{NAME}/*"
    assert Service.label(service, f"{NAME}/echo") == f"{NAME}/echo"
    assert Service.label(service, "nobody/knows") == "unknown/*"


def test_single_turn_is_the_specs_kind_everywhere(tmp_path: Path) -> None:
    with (
        make_server(tmp_path, ENVSERVER_PLUGINS=PLUGIN) as server,
        httpx.Client(base_url=server.base_url, timeout=60) as http,
    ):
        catalogue = http.get("/v1/envs").json()
        kinds = {env["id"]: env["kind"] for env in catalogue["envs"]}
        assert kinds[f"{NAME}/echo"] == "single_turn" and kinds["alfworld"] == "multi_turn"
        families = {env["id"]: env["family"] for env in catalogue["envs"]}
        assert families[f"{NAME}/echo"] == NAME
        scored = http.post(
            "/v1/verify", json={"items": [{"task_id": f"{NAME}/echo@1/7", "response": "7"}]}
        )
        assert scored.json()["results"][0]["reward"] == 1.0
        refused = http.post(
            "/v1/verify", json={"items": [{"task_id": "alfworld@1/7", "response": "look"}]}
        )
        assert refused.status_code == 400 and refused.json()["kind"] == "not-single-turn"
        page = http.get(f"/play/{NAME}/echo")
        assert page.status_code == 200 and "Write the seed back." in page.text


def test_sva_has_one_verifier_name() -> None:
    registry = discover()
    assert [name for name in registry.verifiers if name.startswith("sva")] == ["sva.nl2sva"]
    assert registry.family_of("sva.equivalence") == "sva"
    with pytest.raises(LookupError, match=r"unknown verifier 'sva\.equivalence'"):
        registry.verifier("sva.equivalence")


def test_the_sva_cache_keeps_decided_verdicts_and_no_time_out() -> None:
    from verifiers.sva import check
    from verifiers.sva.api import CheckOptions, check_equivalence, parse_assertion

    widths = {"a": 1, "b": 1}
    a = parse_assertion("assert property(@(posedge clk) a |-> ##[1:20] b);", widths=widths)
    b = parse_assertion("assert property(@(posedge clk) a |-> s_eventually b);", widths=widths)
    check._decided.cache_clear()
    undecided = check_equivalence(a, b, CheckOptions(timeout_s=1e-6))
    assert undecided.verdict == "unknown"
    assert check._decided.cache_info().currsize == 0  # a time-out is checked again next time
    decided = check_equivalence(a, b, CheckOptions(timeout_s=60))
    assert decided.verdict != "unknown"
    again = check_equivalence(a, b, CheckOptions(timeout_s=60))
    assert again is decided and check._decided.cache_info().hits == 1
