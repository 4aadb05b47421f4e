"""Sampling continuations from a causal LM: what the trainer's rollouts and the evaluation's
samples (``clients.train.evaluate``) share."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from clients.transitions import observation_text
from envserver.wire import Observation

TINY = "tiny"
"""The model name that builds a small random model here (``clients.train.tiny``)."""


def prompt_text(tokenizer: Any, observation: Observation | None) -> str:
    """An observation as the model's prompt: a chat through the tokenizer's chat template
    (where it has one), else the text."""
    if isinstance(observation, list) and getattr(tokenizer, "chat_template", None):
        messages = [m.model_dump() for m in observation]
        return str(
            tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        )
    return observation_text(observation)


def sample(
    model: Any,
    tokenizer: Any,
    contexts: list[list[int]],
    *,
    temperature: float,
    max_new_tokens: int,
    device: torch.device,
    dtype: torch.dtype,
) -> list[list[int]]:
    """One sampled continuation per context (left-padded together), up to and including its
    end-of-sequence."""
    width = max(len(c) for c in contexts)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts], device=device)
    attention = torch.tensor(
        [[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=device
    )
    with torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32):
        out = model.generate(
            input_ids=ids,
            attention_mask=attention,
            do_sample=True,
            temperature=temperature,
            top_k=0,
            top_p=1.0,
            max_new_tokens=max_new_tokens,
            pad_token_id=pad,
        )
    continuations = []
    eos = tokenizer.eos_token_id
    for row in out[:, width:].tolist():
        continuations.append(row[: row.index(eos) + 1] if eos in row else row)
    return continuations


def completions(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Observation],
    n: int,
    *,
    temperature: float,
    max_new_tokens: int,
    device: torch.device,
    dtype: torch.dtype,
    batch: int = 64,
) -> list[list[str]]:
    """``n`` sampled completions of each prompt, as text, ``batch`` sequences at a time."""
    contexts = [
        ids
        for prompt in prompts
        for ids in [tokenizer(prompt_text(tokenizer, prompt))["input_ids"]] * n
    ]
    was_training = model.training
    model.eval()
    tokens: list[list[int]] = []
    with torch.no_grad():
        for start in range(0, len(contexts), batch):
            tokens += sample(
                model, tokenizer, contexts[start : start + batch], temperature=temperature,
                max_new_tokens=max_new_tokens, device=device, dtype=dtype,
            )  # fmt: skip
    model.train(was_training)
    texts = [str(tokenizer.decode(t, skip_special_tokens=True)) for t in tokens]
    return [texts[i * n : (i + 1) * n] for i in range(len(prompts))]


def load_policy(model: str, workdir: Path, device: str) -> tuple[Any, Any]:
    """The model and tokenizer at ``model`` (a local directory; ``tiny``: a small random one
    built in ``workdir``, nothing downloaded) on ``device``, left-padding."""
    if model == TINY:
        from clients.train.tiny import tiny_model  # noqa: PLC0415 - only this mode needs it

        policy, tokenizer = tiny_model(workdir / "tiny-model")
    elif not Path(model).is_dir():
        raise OSError(f"{model} is not a model directory here (nothing is loaded from a hub)")
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=True)
        policy = AutoModelForCausalLM.from_pretrained(model, local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return policy.to(torch.device(device)), tokenizer


def default_device() -> str:
    """``cuda`` when a GPU is present, else ``cpu``."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def dtype_for(device: torch.device) -> torch.dtype:
    """bfloat16 on a GPU, float32 on a CPU (as the trainer samples)."""
    return torch.bfloat16 if device.type == "cuda" else torch.float32
