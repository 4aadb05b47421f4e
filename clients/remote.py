"""What a Gymnasium environment of the server opens, shared by ``EnvServerEnv`` and
``EnvServerVectorEnv``: their keyword arguments (``RemoteArgs``) and what those give
(``Remote``: the client, the served spec, the default options and the spaces)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import httpx

from clients.http import DEFAULT_TIMEOUT, EnvServerClient, Transport
from clients.retry import RetryPolicy
from clients.spaces import UnicodeText
from clients.transitions import DEFAULT_MAX_OBSERVATION_CHARS, served_spec
from envserver.wire import MAX_ACTION_CHARS, EnvInfo


class RemoteArgs(TypedDict, total=False):
    """The keyword arguments of both environments (documented on ``EnvServerEnv``)."""

    base_url: str | None
    api_key: str | None
    options: Mapping[str, Any] | None
    client: EnvServerClient | None
    timeout: float | httpx.Timeout
    retry: RetryPolicy | None
    transport: Transport
    max_observation_chars: int
    max_action_chars: int


@dataclass(frozen=True)
class Remote:
    """An environment's connection to the server and what it learnt there when made."""

    client: EnvServerClient
    owns_client: bool
    env_info: EnvInfo
    options: dict[str, Any]
    observation_space: UnicodeText
    action_space: UnicodeText

    @classmethod
    def open(cls, env_id: str, args: RemoteArgs) -> Remote:
        """``args``' client (or a new one of ``base_url``, ``api_key``, ``timeout``, ``retry``
        and ``transport``) and the server's spec of ``env_id`` (see ``served_spec``)."""
        unknown = set(args) - set(RemoteArgs.__annotations__)
        if unknown:  # gym.make passes any keyword along
            raise TypeError(f"unexpected keyword arguments: {', '.join(sorted(unknown))}")
        given = args.get("client")
        client = given or EnvServerClient(
            args.get("base_url"),
            api_key=args.get("api_key"),
            timeout=args.get("timeout", DEFAULT_TIMEOUT),
            retry=args.get("retry"),
            transport=args.get("transport", "http"),
        )
        return cls(
            client=client,
            owns_client=given is None,
            env_info=served_spec(client, env_id, close_on_error=given is None),
            options=dict(args.get("options") or {}),
            observation_space=UnicodeText(
                args.get("max_observation_chars", DEFAULT_MAX_OBSERVATION_CHARS)
            ),
            action_space=UnicodeText(args.get("max_action_chars", MAX_ACTION_CHARS)),
        )

    def close(self) -> None:
        """Close the client if the environment opened it."""
        if self.owns_client:
            self.client.close()
