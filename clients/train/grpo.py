"""The GRPO objective, model-free: group-normalised advantages, the clipped ratio surrogate and
the k3 KL estimate, with masking. Same conventions as TRL's and verl's GRPO.

A sample whose reward the service could not give (status ``timeout``/``error``) is *invalid*:
it is left out of its group's mean and standard deviation, its advantage is 0 and its tokens
are masked out of the loss, so it contributes no gradient at all (never a reward of 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

STD_EPS = 1e-4  # as TRL: A = (r - mean) / (std + 1e-4)


def group_advantages(rewards: torch.Tensor, valid: torch.Tensor, group_size: int) -> torch.Tensor:
    """``(r - mean_group) / (std_group + eps)`` over the valid samples of each group of
    ``group_size`` consecutive samples; 0 for invalid samples."""
    r = rewards.view(-1, group_size).float()
    v = valid.view(-1, group_size).float()
    count = v.sum(dim=1, keepdim=True)
    mean = (r * v).sum(dim=1, keepdim=True) / count.clamp(min=1)
    # Unbiased, like torch.std (TRL's choice); a group with one valid sample has no spread.
    var = (((r - mean) ** 2) * v).sum(dim=1, keepdim=True) / (count - 1).clamp(min=1)
    advantages = (r - mean) / (var.sqrt() + STD_EPS) * v
    return advantages.view(-1)


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Log-probability of each of ``tokens`` under ``logits`` (same leading shape)."""
    return torch.gather(logits.log_softmax(dim=-1), -1, tokens.unsqueeze(-1)).squeeze(-1)


@dataclass(frozen=True)
class LossParts:
    """The loss and what to log about it."""

    loss: torch.Tensor
    kl: float  # mean per-token KL to the reference over the valid tokens
    clipped: float  # fraction of valid tokens whose ratio was clipped


def grpo_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    epsilon: float = 0.2,
    beta: float = 0.04,
) -> LossParts:
    """The per-sequence-normalised GRPO loss over ``mask``ed completion tokens.

    ``logp``, ``old_logp``, ``ref_logp``, ``mask``: (batch, tokens); ``advantages``: (batch,).
    Each sequence's token losses are averaged over its own tokens, then sequences are averaged
    over those that have any token (invalid samples have none).
    """
    mask = mask.float()
    ratio = torch.exp(logp - old_logp)
    a = advantages.unsqueeze(1)
    surrogate = torch.minimum(ratio * a, torch.clamp(ratio, 1 - epsilon, 1 + epsilon) * a)
    per_token = -surrogate
    kl = torch.zeros_like(logp)
    if ref_logp is not None and beta > 0:
        delta = ref_logp - logp
        kl = torch.exp(delta) - delta - 1  # k3: unbiased, always >= 0
        per_token = per_token + beta * kl
    tokens = mask.sum(dim=1)
    per_sequence = (per_token * mask).sum(dim=1) / tokens.clamp(min=1)
    sequences = (tokens > 0).float()
    loss = (per_sequence * sequences).sum() / sequences.sum().clamp(min=1)
    total = mask.sum().clamp(min=1)
    clipped = ((ratio - 1).abs() > epsilon).float()
    return LossParts(
        loss=loss,
        kl=float((kl.detach() * mask).sum() / total),
        clipped=float((clipped * mask).sum() / total),
    )
