"""TRL: a ``reward_funcs`` entry that scores a whole generation batch with one service call.

    from clients.adapters.trl import RemoteReward
    trainer = GRPOTrainer(model, reward_funcs=[RemoteReward(verifier="math")], ...)

TRL calls ``reward(prompts=..., completions=..., completion_ids=..., **columns)`` with every
dataset column except ``prompt`` as a keyword, one value per completion; async callables run
concurrently on TRL's event loop. The reference comes from the ``reference_column`` (TRL's
examples call it ``ground_truth``), or a ``task_id`` column names the task so the reference
never leaves the server. A completion the service could not score (``timeout``/``error``) gets
``None``, which TRL treats as "does not apply" (NaN) rather than a reward of 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clients.http import AsyncEnvServerClient


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or (conversational format) the content of the last
    message of a list of chat messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion:
        last = completion[-1]
        if isinstance(last, Mapping):
            return str(last.get("content") or "")
    raise TypeError(f"cannot read a completion of type {type(completion).__name__}")


class RemoteReward:
    """An async TRL reward function backed by ``POST /v1/verify`` (one request per batch).

    ``__name__`` is what TRL logs (``rewards/<name>/mean``): ``envserver_<verifier>`` unless
    ``name`` is given.
    """

    def __init__(
        self,
        verifier: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        reference_column: str = "ground_truth",
        options: Mapping[str, Any] | None = None,
        timeout_s: float | None = None,
        name: str | None = None,
    ) -> None:
        self.verifier = verifier
        self.base_url = base_url
        self.api_key = api_key
        self.reference_column = reference_column
        self.options = dict(options or {})
        self.timeout_s = timeout_s
        self.__name__ = name or f"envserver_{verifier or 'task'}"

    def _items(
        self, completions: Sequence[Any], columns: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        texts = [completion_text(c) for c in completions]
        if "task_id" in columns:
            return [
                {"response": t, "task_id": i}
                for t, i in zip(texts, columns["task_id"], strict=True)
            ]
        if self.verifier is None:
            raise ValueError("RemoteReward needs a verifier, or a 'task_id' column in the dataset")
        references = columns.get(self.reference_column)
        if references is None:
            raise ValueError(f"the dataset has no '{self.reference_column}' column for references")
        return [{"response": t, "reference": r} for t, r in zip(texts, references, strict=True)]

    async def __call__(
        self,
        prompts: Sequence[Any] | None = None,
        completions: Sequence[Any] = (),
        completion_ids: Any = None,
        **columns: Any,
    ) -> list[float | None]:
        """Rewards in completion order; ``None`` where the service could not score."""
        items = self._items(completions, columns)
        if not items:
            return []
        async with AsyncEnvServerClient(self.base_url, api_key=self.api_key) as client:
            scored = await client.verify(
                items,
                verifier=None if "task_id" in columns else self.verifier,
                options=self.options or None,
                timeout_s=self.timeout_s,
            )
        return [r.reward if r.status in ("ok", "invalid") else None for r in scored.results]
