"""``/mcp`` with the ``mcp`` SDK's own client session over streamable HTTP: the tools are listed,
an ALFWorld game is played to ``won`` from the expert plan, a batch of math answers is verified,
and refusals are tool errors carrying the problem; what a stateless server does not serve (GET,
DELETE) is 405 and a body it cannot accept a JSON-RPC parse error (tests/test_fuzz.py fuzzes
both)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import INVALID_REQUEST, PARSE_ERROR, CallToolResult, TextContent

from tests.test_contracts import env

Session = Callable[[ClientSession], Awaitable[None]]


def with_session(base_url: str, play: Session) -> None:
    async def run() -> None:
        async with (
            streamable_http_client(f"{base_url}/mcp") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await play(session)

    asyncio.run(run())


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def structured(result: CallToolResult) -> dict[str, Any]:
    assert result.structuredContent is not None, text(result)
    return result.structuredContent


def test_the_tools_are_listed_and_describe_their_arguments(base_url: str) -> None:
    async def play(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"list_environments", "reset", "step", "verify"}
        assert set(tools["step"].inputSchema["required"]) == {"env_id", "state", "action"}
        catalogue = structured(await session.call_tool("list_environments", {}))
        assert "alfworld" in {entry["id"] for entry in catalogue["envs"]}
        assert "math" in {entry["name"] for entry in catalogue["verifiers"]}

    with_session(base_url, play)


def test_an_alfworld_game_is_played_to_won(base_url: str) -> None:
    async def play(session: ClientSession) -> None:
        options = {"expert_plan": True}
        first = await session.call_tool(
            "reset", {"env_id": "alfworld", "seed": 3, "options": options}
        )
        assert not first.isError, text(first)
        reply = structured(first)
        # What a model reads: the observation, the admissible actions and the token.
        assert reply["observation"] in text(first)
        assert "Admissible actions: " in text(first)
        assert reply["state"] in text(first)
        state = reply["state"]
        for action in reply["info"]["expert_plan"]:
            result = await session.call_tool(
                "step", {"env_id": "alfworld", "state": state, "action": action}
            )
            assert not result.isError, text(result)
            step = structured(result)
            assert step["status"] == "ok", step
            state = step["state"]
        assert (step["reward"], step["terminated"], step["info"]["won"]) == (1.0, True, True)
        assert "the episode ended" in text(result)

    with_session(base_url, play)


def test_a_batch_of_math_answers_is_verified(base_url: str) -> None:
    math = env("math")
    options = math.spec.options_model()
    tasks = []
    for seed in range(6):
        first = math.reset(seed, options)
        right = seed % 2 == 0
        answer = math.expert_action(first.state) if right else "\\boxed{no answer}"
        tasks.append((f"math@{math.spec.version}/{seed}", answer, right))

    async def play(session: ClientSession) -> None:
        items = [{"response": answer, "task_id": task} for task, answer, _ in tasks]
        result = await session.call_tool("verify", {"items": items})
        assert not result.isError, text(result)
        scored = structured(result)["results"]
        assert [r["reward"] for r in scored] == [1.0 if right else 0.0 for *_, right in tasks]
        assert len(text(result).splitlines()) == len(tasks)

    with_session(base_url, play)


def test_refusals_are_tool_errors_with_the_problem(base_url: str) -> None:
    async def play(session: ClientSession) -> None:
        unknown = await session.call_tool("reset", {"env_id": "no-such-env"})
        assert unknown.isError
        assert structured(unknown)["status"] == 404
        forged = await session.call_tool(
            "step", {"env_id": "math", "state": "forged", "action": "x"}
        )
        assert forged.isError
        assert structured(forged)["status"] == 400
        both = await session.call_tool("reset", {"env_id": "math", "seed": 1, "task_id": "x"})
        assert (both.isError, structured(both)["status"]) == (True, 422)

    with_session(base_url, play)


def test_a_seed_is_an_integer_not_its_text(base_url: str) -> None:
    async def play(session: ClientSession) -> None:
        text_seed = await session.call_tool("reset", {"env_id": "math", "seed": "42"})
        assert text_seed.isError, text(text_seed)
        number = await session.call_tool("reset", {"env_id": "math", "seed": 42})
        assert not number.isError, text(number)

    with_session(base_url, play)


HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_a_stateless_server_answers_post_only_and_holds_no_stream(
    base_url: str, method: str
) -> None:
    # GET would open an event stream for messages a stateless server never sends, and nothing
    # would end it; the specification lets a server answer 405 instead.
    answer = httpx.request(method, f"{base_url}/mcp", headers=HEADERS, timeout=10)
    assert (answer.status_code, answer.headers["allow"]) == (405, "POST")
    assert answer.json()["error"]["code"] == INVALID_REQUEST


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 5000 + b"]" * 5000,  # deeper than any request may nest
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "tools/list"}',  # half a surrogate pair
        b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}',
        b"{not json",
    ],
)
def test_a_body_that_is_not_json_the_service_accepts_is_a_parse_error(
    base_url: str, body: bytes
) -> None:
    answer = httpx.post(f"{base_url}/mcp", content=body, headers=HEADERS, timeout=30)
    assert answer.status_code == 400, answer.text
    error = answer.json()
    assert (error["id"], error["error"]["code"]) == (None, PARSE_ERROR), error
