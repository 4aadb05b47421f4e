"""The red-team suites' mechanism: the format and its errors, where suites are found (each
family's declaration names its own), the judge, ``envserver audit`` in process and against a
live server (every family with a suite).

Each family's own suite is checked in process by tests/test_contracts.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envserver import redteam
from envserver.families import declared
from envserver.redteam import Case, Got, SuiteError
from tests.conftest import RESTRICTED_KEY, TEST_SERVER_ENV
from tests.server import ROOT, LiveServer
from verifiers.tamarin.prover import find_prover

EXIT_AUDIT_FAILED = 4
GOOD = """
[[case]]
name = "wrong"
why = "not the reference"
verifier = "math"
reference = "4"
response = "\\\\boxed{3}"
expect = "zero"
"""


def write(folder: Path, text: str, name: str = "suite.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[case]\nname = 1", "cannot read it as TOML"),
        ("title = 'x'", "case: Field required"),
        (GOOD.replace('expect = "zero"', 'expect = "maybe"'), "case 1 ('wrong'): expect"),
        (GOOD.replace('verifier = "math"', 'verifier = "math"\ntask_id = "math@1/1"'),
         "case 1 ('wrong'): give exactly one of task_id, verifier or env"),
        (GOOD.replace('reference = "4"\n', ""), "case 1 ('wrong'): verifier needs reference"),
        (GOOD.replace('expect = "zero"', 'expect = "no_win"'), "no_win is for multi-turn"),
        (GOOD.replace('why = "not the reference"\n', ""), "case 1 ('wrong'): why: Field required"),
        (GOOD + GOOD, "case 2 ('wrong'): the name is used twice"),
        (GOOD.replace("[[case]]", "[[case]]\nseverity = 'high'"), "severity: Extra inputs"),
        ('[[case]]\nname = "e"\nwhy = "w"\nenv = "alfworld"\nseed = 1\nactions = ["look"]\n'
         'response = "x"\nexpect = "no_win"', "response do not go with env"),
        ('[[case]]\nname = "e"\nwhy = "w"\nenv = "alfworld"\nseed = 1\nactions = []\n'
         'expect = "no_win"', "actions: List should have at least 1 item"),
    ],
)  # fmt: skip
def test_a_malformed_suite_is_an_error_naming_the_file_and_case(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SuiteError) as caught:
        redteam.load_suite("family", path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_every_field_of_the_format_loads(tmp_path: Path) -> None:
    text = """
[[case]]
name = "by task id"
why = "w"
task_id = "math@1/3"
response = "r"
expect = "invalid"

[[case]]
name = "by verifier"
why = "w"
verifier = "code"
reference = { tests = { kind = "stdin", items = [] } }
options = { reward = "all" }
response = "r"
expect = "below_full"

[[case]]
name = "an episode"
why = "w"
env = "webshop"
seed = 3
options = { step_limit = 5 }
actions = ["search[x]"]
expect = "no_win"
"""
    cases = redteam.load_suite("f", write(tmp_path, text)).cases
    assert [case.target for case in cases] == ["math", "code", "webshop"]
    assert cases[1].reference == {"tests": {"kind": "stdin", "items": []}}
    assert cases[1].options == {"reward": "all"}
    assert cases[2].actions == ["search[x]"] and cases[2].seed == 3


def test_a_package_keeps_its_suite_inside_and_a_module_beside_itself() -> None:
    suites = {
        family.name: family.suite
        for family in declared(["tests.plugins.faulty", "tests.plugins.needs_missing"])
    }
    assert suites["code"] == ROOT / "environments/code/redteam.toml"
    assert suites["test"] == ROOT / "tests/plugins/faulty.redteam.toml"
    # Named by the declaration of a family that cannot load here.
    assert suites["test.needs_missing"] == ROOT / "tests/plugins/needs_missing.redteam.toml"
    assert {"code", "sbol", "tamarin", "alfworld"} <= set(suites)
    assert all(suite is not None and suite.is_file() for suite in suites.values()), suites


def case(expect: str, **fields: object) -> Case:
    target = {"env": "e", "seed": 1, "actions": ["a"]} if expect == "no_win" else {
        "verifier": "v", "reference": "r", "response": "x"}  # fmt: skip
    return Case.model_validate({"name": "n", "why": "w", "expect": expect, **target, **fields})


@pytest.mark.parametrize(
    ("expect", "got", "verdict"),
    [
        ("zero", Got("ok", 0.0), True),
        ("zero", Got("invalid", 0.0), True),
        ("zero", Got("ok", 0.5), False),
        ("zero", Got("error", None), False),
        ("zero", Got("timeout", None), False),
        ("invalid", Got("invalid", 0.0), True),
        ("invalid", Got("ok", 0.0), False),
        ("full", Got("ok", 1.0), True),
        ("full", Got("ok", 0.99), False),
        ("full", Got("ok", 1.0, steps=3, won=False), False),
        ("full", Got("ok", 1.0, steps=3, won=True), True),
        ("below_full", Got("ok", 0.6), True),
        ("below_full", Got("ok", 1.0), False),
        ("below_full", Got("error", None), False),
        ("no_win", Got("invalid", 0.0, steps=60), True),
        ("no_win", Got("ok", 1.0, steps=2, won=True), False),
        ("no_win", Got("error", None, steps=1), False),
    ],
)
def test_the_judge(expect: redteam.Expect, got: Got, verdict: bool) -> None:
    # An item with no reward meets no expectation: an audit that could not score proves nothing.
    assert redteam.meets(expect, got) is verdict


def test_select_by_family_or_by_target() -> None:
    code = redteam.Suite("code", Path("c"), (case("zero"),))
    other = redteam.Suite(
        "x", Path("x"), (case("zero", verifier="code"), case("zero", verifier="sbol.circuit"))
    )
    families = declared()
    assert redteam.select([code, other], None, families) == [code, other]
    assert [s.family for s in redteam.select([code, other], "code", families)] == ["code", "x"]
    chosen = redteam.select([code, other], "sbol", families)  # sbol.circuit is sbol's
    assert [c.target for s in chosen for c in s.cases] == ["sbol.circuit"]
    assert redteam.select([code, other], "nothing", families) == []


PLUGIN = """
from pathlib import Path

from environments.family import Contents, Family
from verifiers.base import Verifier
from verifiers.score import Score


def check(response, reference, options):
    if response == "boom":
        raise RuntimeError("broken")
    return Score.ok(1.0 if response.strip() == reference else 0.0)


VERIFIER = Verifier("rt.exact", "1", "Exact match after stripping.", check)
FAMILY = Family(
    name="rt",
    load=lambda: Contents(verifiers=(VERIFIER,)),
    suite=Path(__file__).with_suffix(".redteam.toml"),
)
"""


def audit(
    *args: str, pythonpath: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(pythonpath or ""), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-m", "envserver.cli", "audit", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_audit_in_process_fails_on_a_broken_case_and_says_which(tmp_path: Path) -> None:
    (tmp_path / "rt_plugin.py").write_text(PLUGIN)
    cases = [
        ("padded", "spaces do not matter", " 7 ", "full"),
        ("wrong", "not the reference", "8", "zero"),
        ("claimed", "this suite is wrong on purpose: the answer is right", "7", "zero"),
        ("raises", "a verifier that raises cannot pass a case", "boom", "zero"),
    ]
    write(tmp_path, "".join(
        f'[[case]]\nname = "{n}"\nwhy = "{w}"\nverifier = "rt.exact"\nreference = "7"\n'
        f'response = "{r}"\nexpect = "{e}"\n\n' for n, w, r, e in cases
    ), "rt_plugin.redteam.toml")  # fmt: skip
    run = audit("--env", "rt", "--json", pythonpath=tmp_path, ENVSERVER_PLUGINS="rt_plugin")
    assert run.returncode == EXIT_AUDIT_FAILED, run.stdout + run.stderr
    verdicts = {r["case"]: r["verdict"] for r in json.loads(run.stdout)["results"]}
    assert verdicts == {"padded": "pass", "wrong": "pass", "claimed": "fail", "raises": "fail"}
    table = audit("--env", "rt", pythonpath=tmp_path, ENVSERVER_PLUGINS="rt_plugin")
    assert table.returncode == EXIT_AUDIT_FAILED
    assert "rt (" in table.stdout and "2 passed, 2 failed, 0 skipped" in table.stdout
    assert "RuntimeError: broken" in table.stdout


def test_audit_refuses_a_malformed_suite_and_an_unknown_selection(tmp_path: Path) -> None:
    (tmp_path / "rt_plugin.py").write_text(PLUGIN)
    write(tmp_path, GOOD.replace('expect = "zero"', 'expect = "zilch"'), "rt_plugin.redteam.toml")
    run = audit("--env", "rt", pythonpath=tmp_path, ENVSERVER_PLUGINS="rt_plugin")
    assert run.returncode == 2
    assert "rt_plugin.redteam.toml: case 1 ('wrong'): expect" in run.stderr
    unknown = audit("--env", "no-such-family")
    assert unknown.returncode == 2 and "no red-team suite has cases for" in unknown.stderr


def test_audit_over_http_runs_every_familys_suite(live_server: LiveServer) -> None:
    # CI's audit: the shared server (with the test plugins), every suite, through the client.
    plugins = TEST_SERVER_ENV["ENVSERVER_PLUGINS"]
    run = audit("--url", live_server.base_url, "--json", ENVSERVER_PLUGINS=plugins)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    report = json.loads(run.stdout)
    audited = {r["family"] for r in report["results"]}
    shipped = {
        f.name for f in declared(plugins.split(",")) if f.suite is not None and f.suite.is_file()
    }
    assert audited == shipped
    assert {"code", "sbol", "tamarin", "alfworld", "test"} <= audited
    # Without a prover the server answers 503 for a theory it did not record: that case is
    # skipped with the reason (as the in-process audit skips it); every other case passes.
    needs_prover = (
        set() if find_prover() else {("tamarin", "a false lemma under a recorded theory's name")}
    )
    verdicts = {(r["family"], r["case"]): r["verdict"] for r in report["results"]}
    assert all(v == ("skip" if c in needs_prover else "pass") for c, v in verdicts.items()), report
    assert set(report["without_suite"]) == {
        f.name for f in declared(plugins.split(",")) if f.name not in shipped
    }


def test_audit_over_http_skips_what_the_server_cannot_serve(restricted_server: LiveServer) -> None:
    # That server serves tamarin/proof with a backend whose binary is absent: every case of the
    # family is skipped with the server's reason, and skips are not failures.
    run = audit(
        "--url", restricted_server.base_url, "--env", "tamarin", "--json",
        ENVSERVER_API_KEY=RESTRICTED_KEY.split(":", 1)[1],
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    results = json.loads(run.stdout)["results"]
    assert results and all(r["verdict"] == "skip" for r in results), results
    assert all("tamarin" in r["detail"] for r in results), results


def test_finding_and_loading_suites_imports_no_family() -> None:
    # The client-side audit stays light: it reads the declarations (each family package and
    # environments.family, nothing more); the families and the server load only in process mode.
    code = (
        "import sys\n"
        "import clients.cli, clients.audit, envserver.cli\n"
        "from envserver import redteam\n"
        "from envserver.families import declared\n"
        "families = declared()\n"
        "suites, _ = redteam.load_suites(families)\n"
        "assert len(suites) >= 9, suites\n"
        "declarations = {'environments', 'environments.family'}\n"
        "declarations |= {f'environments.{family.name}' for family in families}\n"
        "heavy = ('envserver.registry', 'environments', 'verifiers.', 'sandbox', 'fastapi',\n"
        "         'sympy', 'z3', 'pyslang', 'sbol3', 'ortools', 'sqlalchemy', 'spacy', 'bm25s')\n"
        "light = ('verifiers.numbers',)  # the wire schemas' number rules, pydantic alone\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.startswith(heavy) and m not in (*light, *declarations)))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert run.stdout.strip() == "[]", run.stdout
