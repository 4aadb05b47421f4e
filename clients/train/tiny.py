"""A tiny randomly initialised causal LM and its tokenizer, built locally (nothing downloaded)
and saved to a directory so that trainers load them by path: for tests, smoke runs and the
learning check. Dropout is off, so the KL to an identical reference is exactly 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers


def tiny_model(
    directory: Path, seed: int = 0, *, layers: int = 2, width: int = 32, heads: int = 2
) -> tuple[Any, Any]:
    """A 2-layer GPT-2 and a byte-level BPE tokenizer trained here on a few strings."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    corpus = [
        f"What is {a} + {b}? The answer is \\boxed{{{a + b}}}."
        for a in range(20)
        for b in range(10)
    ]
    tokenizer.train_from_iterator(corpus, trainer=trainer)
    fast = transformers.PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tokenizer,
        pad_token="<pad>",  # noqa: S106 - a vocabulary entry, not a secret
        eos_token="<eos>",  # noqa: S106
        padding_side="left",
    )
    config = transformers.GPT2Config(
        vocab_size=len(fast),
        n_positions=512,
        n_embd=width,
        n_layer=layers,
        n_head=heads,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    torch.manual_seed(seed)
    model = transformers.GPT2LMHeadModel(config)
    model.save_pretrained(directory)
    fast.save_pretrained(directory)
    return model, fast
