"""Seeing a hack happen: reward histograms, item statuses and the top-response share on
``/metrics``, the alert rules (checked and unit-tested by Prometheus's promtool) and the Grafana
dashboard, whose every metric a live server exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from types import SimpleNamespace
from typing import Any, cast

import httpx
import yaml

from envserver.metrics import SKETCH_ITEMS, ResponseSketch
from envserver.registry import discover
from envserver.service import Service
from tests.server import ROOT, LiveServer

DEPLOY = ROOT / "deploy"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERTS_TEST = DEPLOY / "prometheus" / "alerts_test.yml"
DASHBOARD = DEPLOY / "grafana" / "envserver-rewards.json"
METRIC = re.compile(r"\b(envserver_[a-z_]+|envserver:[a-z_0-9:]+)")
SUFFIXES = ("_bucket", "_sum", "_count", "_total")


def test_the_sketch_keeps_only_the_last_items() -> None:
    sketch = ResponseSketch(size=4)
    assert sketch.top_share() == 0.0
    for response in ["a", "a", "a", "b"]:
        sketch.push(response)
    assert sketch.top_share() == 0.75
    for response in ["c", "d", "e"]:  # the three 'a's leave the window
        sketch.push(response)
    assert list(sketch.counts.values()) == [1, 1, 1, 1] and sketch.top_share() == 0.25
    assert len(sketch.window) == 4


def test_a_long_response_costs_its_ends_only_and_differs_by_length() -> None:
    sketch = ResponseSketch()
    long = "x" * 10_000_000
    sketch.push(long)
    sketch.push(long + "x")
    sketch.push("x" * 10_000_000)
    assert sorted(sketch.counts.values()) == [1, 2]


def test_labels_stay_bounded_for_environments_that_come_and_go() -> None:
    service = cast(Service, SimpleNamespace(registry=discover()))
    assert Service.label(service, "math") == "math"
    assert Service.label(service, "sva.nl2sva") == "sva.nl2sva"
    assert Service.label(service, "evo/zero_one_knapsack") == "evo/*"
    assert Service.label(service, "evo/another_one") == "evo/*"
    assert Service.label(service, "mixed") == "mixed"


def _samples(text: str, name: str, **labels: str) -> list[tuple[dict[str, str], float]]:
    found = []
    for line in text.splitlines():
        match = re.fullmatch(rf"{re.escape(name)}\{{(.*)\}} (\S+)", line)
        if match:
            got = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
            if all(got.get(k) == v for k, v in labels.items()):
                found.append((got, float(match.group(2))))
    return found


def test_one_response_for_every_item_shows_on_metrics(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.base_url, timeout=60) as http:
        # 300 items answered with one response: the window holds only it.
        items = [{"response": "1", "reference": str(i % 3)} for i in range(SKETCH_ITEMS + 44)]
        done = http.post("/v1/verify", json={"verifier": "test.sleep", "items": items})
        assert done.status_code == 200, done.text
        reset = http.post("/v1/envs/test.counter/reset", json={"seed": 1}).status_code
        text = http.get("/metrics").text
    assert reset == 404  # not loaded on this server: steps are checked below on alfworld
    target = {"kind": "verify", "target": "test.sleep"}
    [(_, share)] = _samples(text, "envserver_top_response_share", **target)
    [(_, window)] = _samples(text, "envserver_top_response_window_items", **target)
    assert (share, window) == (1.0, SKETCH_ITEMS)
    buckets = {s["le"]: v for s, v in _samples(text, "envserver_reward_bucket", **target)}
    ones = (SKETCH_ITEMS + 44 + 2) // 3  # reference "1" every third item
    assert buckets["0.0"] >= SKETCH_ITEMS + 44 - ones and buckets["0.999"] == buckets["0.0"]
    assert buckets["1.0"] - buckets["0.999"] >= ones
    assert _samples(text, "envserver_items_total", status="ok", **target)


def test_steps_count_their_statuses_and_rewards(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.base_url, timeout=60) as http:
        state = http.post("/v1/envs/alfworld/reset", json={"seed": 3}).json()["state"]
        for action in ["look", "I won", "look"]:
            http.post("/v1/envs/alfworld/step", json={"state": state, "action": action})
        text = http.get("/metrics").text
    step = {"kind": "step", "target": "alfworld"}
    assert _samples(text, "envserver_items_total", status="invalid", **step)
    assert _samples(text, "envserver_items_total", status="ok", **step)
    assert _samples(text, "envserver_reward_count", **step)[0][1] >= 3
    assert _samples(text, "envserver_top_response_window_items", **step)[0][1] >= 3


def _promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is not installed (make test-tools: apt-get install prometheus)"
    return found


def test_the_alert_rules_parse_and_fire_on_hacks_only() -> None:
    for command in (["check", "rules", str(ALERTS)], ["test", "rules", str(ALERTS_TEST)]):
        run = subprocess.run(
            [_promtool(), *command], capture_output=True, text=True, timeout=120, check=False
        )
        assert run.returncode == 0, run.stdout + run.stderr


def _expressions() -> tuple[list[str], set[str]]:
    """Every PromQL expression of the rules and the dashboard, and the recorded names."""
    rules = yaml.safe_load(ALERTS.read_text())["groups"]
    recorded = {r["record"] for group in rules for r in group["rules"] if "record" in r}
    exprs = [r["expr"] for group in rules for r in group["rules"]]
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text())
    exprs += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    exprs.append(dashboard["templating"]["list"][1]["definition"])
    return exprs, recorded


def test_every_metric_the_rules_and_dashboard_read_is_exported(live_server: LiveServer) -> None:
    exprs, recorded = _expressions()
    text = httpx.get(f"{live_server.base_url}/metrics", timeout=30).text
    families = set(re.findall(r"^# TYPE (\S+) ", text, flags=re.MULTILINE))
    named = {name for expr in exprs for name in METRIC.findall(expr)}
    assert {"envserver_reward_sum", "envserver_top_response_share"} <= named
    for name in named:
        if ":" in name:
            assert name in recorded, f"{name} is not a recording rule of {ALERTS.name}"
            continue
        family = next((name.removesuffix(s) for s in SUFFIXES if name.endswith(s)), name)
        assert {name, family} & families, f"{name} is not exported by /metrics"
