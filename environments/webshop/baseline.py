"""A scripted WebShop baseline: search with the instruction, open the best-matching result,
choose the options the instruction names, buy. It reads only what an agent sees (the text
observation and ``info``), so its score is a floor any learned agent should beat.

``envserver webshop baseline [--split test] [--limit N]`` prints the score
(mean reward x 100) and the success rate (reward exactly 1) over the split.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from environments.webshop.bm25 import Analyzer
from environments.webshop.family import WebShopEnv, WebShopOptions

_PRICE_CLAUSE = re.compile(r",? and price lower than ([\d.]+) dollars")
_ASIN = re.compile(r"[a-z0-9]{10}")


@dataclass
class ScriptedShopper:
    """One episode's memory: the options already clicked."""

    analyzer: Analyzer = field(default_factory=Analyzer)
    clicked: set[str] = field(default_factory=set)

    def act(self, observation: str, info: dict[str, object]) -> str:
        """The next action for a ``text`` observation and its ``info``."""
        instruction = str(info["instruction"])
        page = info["page"]
        available = info["available_actions"]
        clickables: list[str] = list(available["clickables"]) if isinstance(available, dict) else []
        if page == "search":
            return f"search[{_PRICE_CLAUSE.sub('', instruction)}]"
        if page == "results":
            return self._pick(observation, instruction, clickables)
        if page == "item":
            words = set(re.findall(r"[\w.\-]+", instruction.lower()))
            for value in clickables[6:]:  # buttons first, option values after them
                if value not in self.clicked and set(value.split()) <= words:
                    self.clicked.add(value)
                    return f"click[{value}]"
            return "click[buy now]"
        return "click[< prev]"

    def _pick(self, observation: str, instruction: str, clickables: Sequence[str]) -> str:
        nodes = observation.split(" [SEP] ")
        wanted = set(self.analyzer(_PRICE_CLAUSE.sub("", instruction)))
        match = _PRICE_CLAUSE.search(instruction)
        limit = float(match.group(1)) if match else float("inf")
        best: tuple[float, int, str] | None = None
        for rank, key in enumerate(k for k in clickables if _ASIN.fullmatch(k)):
            position = nodes.index(key.upper()) if key.upper() in nodes else -1
            title = nodes[position + 1] if 0 <= position < len(nodes) - 1 else ""
            price = nodes[position + 2] if 0 <= position < len(nodes) - 2 else ""
            prices = [float(p) for p in re.findall(r"\$([\d.]+)", price) if p.count(".") <= 1]
            overlap = len(wanted & set(self.analyzer(title)))
            affordable = 1.0 if not prices or min(prices) <= limit else 0.0
            candidate = (overlap + affordable, -rank, key)
            if best is None or candidate > best:
                best = candidate
        if best is None:
            return "click[back to search]"
        return f"click[{best[2]}]"


def evaluate(
    env: WebShopEnv, split: str = "test", limit: int | None = None, max_steps: int = 15
) -> tuple[float, float]:
    """(score, success rate) of the scripted shopper over the split's goals in order."""
    goals = env.shop.split(split)
    count = len(goals) if limit is None else min(limit, len(goals))
    total, successes = 0.0, 0
    for index in range(count):
        options = WebShopOptions(split=split, goal_index=index, step_limit=max_steps)
        first = env.reset(0, options)
        observation, state, info = first.observation, first.state, first.info
        shopper = ScriptedShopper()
        reward = 0.0
        for _ in range(max_steps):
            result = env.step(state, shopper.act(str(observation), info))
            observation, state, info = result.observation, result.state, result.info
            if result.terminated or result.truncated:
                reward = result.score.reward or 0.0
                break
        total += reward
        successes += reward == 1.0
    return 100 * total / count, successes / count
