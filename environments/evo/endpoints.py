"""A configured model endpoint (OpenAI-compatible ``/v1/chat/completions``), for the model
reviewer (L3) and the solver (L4)."""

from __future__ import annotations

import httpx


class EndpointFailure(RuntimeError):
    """The endpoint could not be reached or answered something unreadable: infrastructure."""


def complete(url: str, model: str, prompt: str, timeout_s: float = 120.0) -> str:
    """The model's reply to ``prompt``; raises ``EndpointFailure``."""
    body = {"model": model, "messages": [{"role": "user", "content": prompt}]}
    try:
        reply = httpx.post(url.rstrip("/") + "/v1/chat/completions", json=body, timeout=timeout_s)
        reply.raise_for_status()
        return str(reply.json()["choices"][0]["message"]["content"])
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise EndpointFailure(f"{url}: {type(exc).__name__}: {exc}") from None
