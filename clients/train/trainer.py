"""A thin GRPO trainer whose rewards come from the service.

Each step: draw ``prompts_per_step`` prompts from a ``PromptSource`` (an environment's resets, or
a JSONL dataset: ``clients/train/sources.py``), sample ``group_size`` completions per prompt,
score them all with one batched call (``step``, or ``verify`` for a dataset), and update
the policy on group-normalised advantages with the clipped ratio surrogate and a k3 KL to a
frozen reference. With ``overlap`` the next batch is generated while the service scores the
current one (the next batch is then one update behind the policy; the importance ratio against
the log-probabilities stored at generation corrects for it, as in PPO). With ``curriculum`` the
prompts are the tasks the service's curriculum draws by the pass rates the run has measured;
with ``eval_every``, pass@k on held-out tasks is measured every so many steps
(``clients/train/evaluate.py``).
"""

from __future__ import annotations

import copy
import json
import random
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel

from clients.curriculum import TaskDraws
from clients.http import EnvServerClient
from clients.passk import ALL, PassAtK, table
from clients.passk import plot as plot_passk
from clients.train.evaluate import HeldOutTask, evaluate, held_out_tasks, parse_ks
from clients.train.generation import completions, dtype_for, prompt_text, sample
from clients.train.grpo import group_advantages, grpo_loss, token_logprobs
from clients.train.sources import Curriculum, Dataset, Episodes, PromptSource
from clients.transitions import observation_text
from envserver.wire import MAX_RUN_CHARS, ChatMessage, Observation, StepResponse

SEED_STRIDE = 1_000_003  # seeds of different runs do not overlap


def run_label(config: TrainConfig) -> str:
    """The run's label in the service's statistics: ``config.run``, or the output directory's
    name made a valid label."""
    if config.run:
        return config.run
    name = re.sub(r"[^A-Za-z0-9_.:\-]+", "-", Path(config.output_dir).resolve().name)
    return re.sub(r"^[^A-Za-z0-9]+", "", name)[:MAX_RUN_CHARS] or "grpo"


def _help(text: str) -> dict[str, str]:
    """A config field's command-line help (``envserver-train --help`` shows it with the default)."""
    return {"help": text}


@dataclass
class TrainConfig:
    """Everything a run needs; saved next to its checkpoints. Each field is an option of
    ``envserver-train`` (``--max-new-tokens`` for ``max_new_tokens``), with this help."""

    model: str = field(
        metadata=_help(
            "a local model directory, a hub id, or 'tiny' (a 2-layer GPT-2 with random weights "
            "built from a config, nothing downloaded: a CPU smoke run)"
        )
    )
    env: str = field(
        default="math",
        metadata=_help("the environment whose episodes give the prompts and rewards"),
    )
    env_options: dict[str, Any] = field(
        default_factory=dict, metadata=_help("reset options of the environment, as JSON")
    )
    verifier: str | None = field(
        default=None,
        metadata=_help("score with this verifier instead of an environment (with --dataset)"),
    )
    dataset: str | None = field(
        default=None,
        metadata=_help('with --verifier: a JSONL file of {"prompt", "reference"}, cycled'),
    )
    output_dir: str = field(
        default="runs/grpo",
        metadata=_help("where metrics.jsonl, checkpoint/ and curves.png go (relative: to here)"),
    )
    base_url: str | None = field(
        default=None, metadata=_help("the service's URL (default: ENVSERVER_URL, else local)")
    )
    api_key: str | None = field(
        default=None, metadata=_help("the service's API key (default: ENVSERVER_API_KEY)")
    )
    device: str = field(default="cpu", metadata=_help("torch device: cpu, cuda, cuda:1, ..."))
    steps: int = field(default=100, metadata=_help("optimizer steps in the run"))
    prompts_per_step: int = field(default=4, metadata=_help("prompts (episodes) per step"))
    group_size: int = field(
        default=8, metadata=_help("completions sampled per prompt (the GRPO group)")
    )
    max_new_tokens: int = field(
        default=64, metadata=_help("tokens generated per completion (per turn)")
    )
    temperature: float = field(default=1.0, metadata=_help("sampling temperature"))
    learning_rate: float = field(default=1e-5, metadata=_help("AdamW learning rate"))
    epsilon: float = field(default=0.2, metadata=_help("clip range of the probability ratio"))
    beta: float = field(
        default=0.04, metadata=_help("weight of the KL penalty to the frozen reference (0: none)")
    )
    micro_batch_size: int = field(
        default=16,
        metadata=_help("sequences per forward/backward; gradients accumulate over the rest"),
    )
    overlap: bool = field(
        default=True, metadata=_help("generate the next batch while the service scores this one")
    )
    max_turns: int = field(
        default=1,
        metadata=_help("above 1: multi-turn episodes (give the environment that many attempts)"),
    )
    turn_rewards: str = field(
        default="sum",
        metadata=_help('multi-turn: "sum" of the step rewards, or the "final" step\'s only'),
    )
    checkpoint_every: int = field(
        default=50, metadata=_help("save a resumable checkpoint every this many steps")
    )
    seed: int = field(
        default=0, metadata=_help("seed of the prompts drawn and of torch's sampling")
    )
    curriculum: bool = field(
        default=False,
        metadata=_help(
            "draw each step's tasks through the service's curriculum, by the pass rates the "
            "run has measured (a single-turn --env; the server needs ENVSERVER_STATS)"
        ),
    )
    run: str | None = field(
        default=None,
        metadata=_help(
            "the run's label in the service's statistics (default: the output directory's name)"
        ),
    )
    curriculum_target: float = field(
        default=0.5, metadata=_help("with --curriculum: the pass rate the draws centre on")
    )
    eval_every: int = field(
        default=0,
        metadata=_help("every this many steps, pass@k on held-out tasks of --env (0: never)"),
    )
    eval_tasks: int = field(default=32, metadata=_help("held-out tasks of each evaluation"))
    eval_k: str = field(default="1,8", metadata=_help("the k of the evaluations' pass@k"))


@dataclass
class Rollout:
    """One step's episodes as left-padded token sequences: which tokens the policy generated
    (``loss_mask``, aligned with ``sequences[:, 1:]``) and their log-probabilities then."""

    sequences: torch.Tensor  # (B, L)
    attention: torch.Tensor
    loss_mask: torch.Tensor  # (B, L - 1)
    old_logp: torch.Tensor
    ref_logp: torch.Tensor | None
    texts: list[str]  # the last turn of each episode
    targets: list[Any]  # what each is scored against: a state token (to step), or a reference
    seconds: float
    scored: tuple[torch.Tensor, torch.Tensor] | None = None  # multi-turn: scored while played


class GRPOTrainer:
    """``GRPOTrainer(config).train()``: metrics per step go to ``metrics.jsonl`` in the output
    directory, checkpoints to ``checkpoint/``, curves to ``curves.png`` at the end."""

    def __init__(
        self,
        config: TrainConfig,
        model: PreTrainedModel | None = None,
        tokenizer: Any = None,
    ) -> None:
        self.config = config
        self.client = EnvServerClient(config.base_url, api_key=config.api_key)
        self.source = self._source()  # a bad mode fails before the server is asked
        self.eval_ks = parse_ks(config.eval_k) if config.eval_every else []
        self._check_target()  # before minutes of model loading
        self.out = Path(config.output_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.device = torch.device(config.device)
        self.dtype = dtype_for(self.device)
        self.tokenizer = tokenizer or AutoTokenizer.from_pretrained(config.model)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        # transformers' model types are too loose for strict typing; Any is honest here.
        self.model = cast(Any, model or AutoModelForCausalLM.from_pretrained(config.model))
        self.model.to(self.device)
        self.reference = copy.deepcopy(self.model).eval() if config.beta > 0 else None
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=config.learning_rate)
        self.step = 0
        self._held_out: list[HeldOutTask] | None = None
        self._resume()

    def _source(self) -> PromptSource:
        """The run's mode: an environment's episodes, or a dataset scored by a verifier (which
        trains single-turn). Raises ValueError for a dataset without a verifier."""
        config = self.config
        if config.curriculum:
            if config.dataset is not None:
                raise ValueError(
                    "--curriculum draws tasks of --env; for a dataset's rows use "
                    "clients.adapters.trl.curriculum_dataset or verl's CurriculumSampler"
                )
            draws = TaskDraws(
                self.client, config.env, run_label(config), options=config.env_options,
                target=config.curriculum_target, seed=config.seed,
            )  # fmt: skip
            return Curriculum(self.client, config.env, draws)
        if config.dataset is None:
            first_seed = config.seed * SEED_STRIDE
            return Episodes(self.client, config.env, config.env_options, first_seed)
        if config.verifier is None or config.max_turns > 1:
            raise ValueError("a dataset needs a verifier, and trains single-turn")
        return Dataset(self.client, config.dataset, config.verifier)

    def _check_target(self) -> None:
        """Raise now, with the server's reason, if it cannot serve what this run scores with:
        ``UnavailableError`` (disabled there, with the fix), ``ClientError`` (unknown), or
        ValueError for a verifier it does not offer."""
        if self.config.verifier is None:
            env = self.client.env(self.config.env)
            if env.kind != "single_turn" and (self.config.curriculum or self.config.eval_every):
                raise ValueError(
                    f"{env.id} is multi-turn: --curriculum and --eval-every draw and score "
                    "tasks of a single-turn environment by id"
                )
            return
        catalogue = self.client.envs()
        if any(v.name == self.config.verifier for v in catalogue.verifiers):
            return
        why = next((d for d in catalogue.disabled if d.name == self.config.verifier), None)
        if why is None:
            raise ValueError(f"the service has no verifier {self.config.verifier!r}")
        raise ValueError(
            f"the service cannot serve verifier {why.name!r}: {why.reason}; to enable it: {why.fix}"
        )

    # -- checkpoints -------------------------------------------------------------------------

    def save_checkpoint(self) -> Path:
        """Weights, tokenizer, optimizer, step and random states, resumable."""
        path = self.out / "checkpoint"
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        torch.save(
            {
                "optimizer": self.optimizer.state_dict(),
                "step": self.step,
                "torch_rng": torch.get_rng_state(),
                "python_rng": random.getstate(),
            },
            path / "trainer_state.pt",
        )
        (path / "train_config.json").write_text(json.dumps(asdict(self.config), indent=2))
        return path

    def _resume(self) -> None:
        path = self.out / "checkpoint"
        if not (path / "trainer_state.pt").exists():
            torch.manual_seed(self.config.seed)
            random.seed(self.config.seed)
            return
        state = torch.load(path / "trainer_state.pt", weights_only=False)
        weights = AutoModelForCausalLM.from_pretrained(path).state_dict()
        self.model.load_state_dict(weights)
        self.optimizer.load_state_dict(state["optimizer"])
        self.step = int(state["step"])
        torch.set_rng_state(state["torch_rng"])
        random.setstate(state["python_rng"])

    # -- rollouts ----------------------------------------------------------------------------

    def _prompt_text(self, observation: str | list[ChatMessage] | None) -> str:
        return prompt_text(self.tokenizer, observation)

    def _logprobs(
        self, model: Any, sequences: torch.Tensor, attention: torch.Tensor
    ) -> torch.Tensor:
        # Positions count real tokens only, as generate() counts them under left padding.
        positions = (attention.cumsum(dim=1) - 1).clamp(min=0)
        logits = model(input_ids=sequences, attention_mask=attention, position_ids=positions).logits
        return token_logprobs(logits[:, :-1].float(), sequences[:, 1:])

    def _sample(self, contexts: list[list[int]]) -> list[list[int]]:
        """One sampled continuation per context, up to and including its end-of-sequence."""
        return sample(
            self.model,
            self.tokenizer,
            contexts,
            temperature=self.config.temperature,
            max_new_tokens=self.config.max_new_tokens,
            device=self.device,
            dtype=self.dtype,
        )

    def _pack(
        self, tokens: list[list[int]], generated: list[list[int]]
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Left-padded sequences, attention, and the mask of generated target tokens."""
        width = max(len(t) for t in tokens)
        pad = self.tokenizer.pad_token_id
        rows = [[pad] * (width - len(t)) + t for t in tokens]
        flags = [[0] * (width - len(g)) + g for g in generated]
        attention = [[0] * (width - len(t)) + [1] * len(t) for t in tokens]
        device = self.device
        return (
            torch.tensor(rows, device=device),
            torch.tensor(attention, device=device),
            torch.tensor(flags, device=device)[:, 1:],
        )

    @torch.no_grad()
    def _generate(self, step: int) -> Rollout:
        """Play one step's episodes: ``group_size`` per prompt, ``max_turns`` model turns each
        (the environment's replies are context, not trained on)."""
        started = time.perf_counter()
        observations, drawn = self.source.draw(step, self.config.prompts_per_step)
        prompts = [self._prompt_text(observation) for observation in observations]
        group = self.config.group_size
        self.model.eval()
        tokens = [
            ids for prompt in prompts for ids in [self.tokenizer(prompt)["input_ids"]] * group
        ]
        generated = [[0] * len(t) for t in tokens]
        targets = [target for target in drawn for _ in range(group)]
        texts = [""] * len(tokens)
        multi_turn = self.config.max_turns > 1
        rewards = torch.zeros(len(tokens))
        valid = torch.ones(len(tokens), dtype=torch.bool)
        active = list(range(len(tokens)))
        for turn in range(self.config.max_turns):
            for row, new in zip(active, self._sample([tokens[r] for r in active]), strict=True):
                tokens[row] = tokens[row] + new
                generated[row] = generated[row] + [1] * len(new)
                texts[row] = str(self.tokenizer.decode(new, skip_special_tokens=True))
            if not multi_turn:
                break
            results = self.source.score([targets[r] for r in active], [texts[r] for r in active])
            still = []
            for row, result in zip(active, results, strict=True):
                if not isinstance(result, StepResponse):  # datasets train single-turn (checked)
                    raise TypeError("only an environment's episodes can take several turns")
                if result.reward is None:  # unscored: masked out of the whole update
                    valid[row] = False
                    continue
                final = result.terminated or result.truncated or turn + 1 == self.config.max_turns
                if self.config.turn_rewards == "sum" or final:
                    rewards[row] += result.reward
                targets[row] = result.state or targets[row]
                if not final:
                    reply = "\n" + observation_text(result.observation) + "\n"
                    feedback = self.tokenizer(reply, add_special_tokens=False)["input_ids"]
                    tokens[row] = tokens[row] + feedback
                    generated[row] = generated[row] + [0] * len(feedback)
                    still.append(row)
            active = still
            if not active:
                break
        sequences, attention, loss_mask = self._pack(tokens, generated)
        old_logp = self._logprobs(self.model, sequences, attention)
        ref_logp = self._logprobs(self.reference, sequences, attention) if self.reference else None
        return Rollout(
            sequences=sequences,
            attention=attention,
            loss_mask=loss_mask,
            old_logp=old_logp,
            ref_logp=ref_logp,
            texts=texts,
            targets=targets,
            seconds=time.perf_counter() - started,
            scored=(rewards, valid) if multi_turn else None,
        )

    def _score(self, rollout: Rollout) -> tuple[torch.Tensor, torch.Tensor]:
        """Rewards and validity (single-turn: one batched step call; multi-turn: already known
        from playing); unscored samples are invalid."""
        if rollout.scored is not None:
            return rollout.scored
        results = self.source.score(rollout.targets, rollout.texts)
        valid = torch.tensor([r.reward is not None for r in results])
        rewards = torch.tensor([r.reward if r.reward is not None else 0.0 for r in results])
        return rewards, valid

    # -- the update --------------------------------------------------------------------------

    def update(
        self, rollout: Rollout, rewards: torch.Tensor, valid: torch.Tensor
    ) -> dict[str, float]:
        """One optimizer step on ``rollout``; the step's metrics."""
        self.model.train()
        advantages = group_advantages(rewards, valid, self.config.group_size).to(self.device)
        mask = rollout.loss_mask * valid.to(self.device).unsqueeze(1)
        batch = rollout.sequences.shape[0]
        micro = self.config.micro_batch_size
        self.optimizer.zero_grad()
        loss_sum, kl_sum, clip_sum = 0.0, 0.0, 0.0
        for lo in range(0, batch, micro):
            part = slice(lo, lo + micro)
            with torch.autocast(
                self.device.type, dtype=self.dtype, enabled=self.dtype != torch.float32
            ):
                logp = self._logprobs(self.model, rollout.sequences[part], rollout.attention[part])
            parts = grpo_loss(
                logp,
                rollout.old_logp[part],
                rollout.ref_logp[part] if rollout.ref_logp is not None else None,
                advantages[part],
                mask[part],
                epsilon=self.config.epsilon,
                beta=self.config.beta,
            )
            share = (min(lo + micro, batch) - lo) / batch
            (parts.loss * share).backward()  # type: ignore[no-untyped-call]
            loss_sum += float(parts.loss.detach()) * share
            kl_sum += parts.kl * share
            clip_sum += parts.clipped * share
        self.optimizer.step()
        self.step += 1
        scored = rewards[valid]
        return {
            "step": float(self.step),
            "reward_mean": float(scored.mean()) if len(scored) else float("nan"),
            "reward_std": float(scored.std()) if len(scored) > 1 else 0.0,
            "masked": float((~valid).sum()),
            "loss": loss_sum,
            "kl": kl_sum,
            "clipped": clip_sum,
            "completion_tokens": float(rollout.loss_mask.sum(dim=1).float().mean()),
        }

    # -- the loop ----------------------------------------------------------------------------

    def rollouts(self) -> Iterator[tuple[Rollout, tuple[torch.Tensor, torch.Tensor], float]]:
        """(rollout, (rewards, valid), seconds waited for the rewards) per step, generation of
        the next batch overlapping the scoring of this one when ``overlap`` is on."""
        if self.step >= self.config.steps:
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rewards") as scorer:
            current = self._generate(self.step)
            pending: Future[tuple[torch.Tensor, torch.Tensor]] = scorer.submit(self._score, current)
            for step in range(self.step, self.config.steps):
                upcoming = (
                    self._generate(step + 1)
                    if self.config.overlap and step + 1 < self.config.steps
                    else None
                )
                waited = time.perf_counter()
                scored = pending.result()
                yield current, scored, time.perf_counter() - waited
                if step + 1 >= self.config.steps:
                    return
                current = upcoming or self._generate(step + 1)
                pending = scorer.submit(self._score, current)

    def evaluate_policy(self, say: Callable[[str], None] = print) -> dict[str, float]:
        """pass@k of the policy now on the run's held-out tasks (``clients.train.evaluate``):
        appended to ``eval.jsonl``, drawn in ``eval-passk.png``, its table passed to ``say``,
        and returned as ``eval_pass@<k>`` metrics over all the tasks."""
        config = self.config
        if self._held_out is None:
            self._held_out = held_out_tasks(
                self.client, config.env, config.eval_tasks, config.env_options
            )

        def generate(prompts: Sequence[Observation], n: int) -> list[list[str]]:
            return completions(
                self.model, self.tokenizer, prompts, n, temperature=config.temperature,
                max_new_tokens=config.max_new_tokens, device=self.device, dtype=self.dtype,
            )  # fmt: skip

        rows, _ = evaluate(self.client, self._held_out, generate, self.eval_ks, seed=self.step)
        with (self.out / "eval.jsonl").open("a") as out:
            out.write(json.dumps({"step": self.step, "pass_at_k": [asdict(r) for r in rows]}))
            out.write("\n")
        plot_passk(rows, self.out / "eval-passk.png", title=f"{config.env}, step {self.step}")
        say(f"pass@k at step {self.step} on {len(self._held_out)} held-out tasks:")
        for line in table(rows):
            say(line)
        overall: list[PassAtK] = [row for row in rows if row.group == ALL] or rows
        return {f"eval_pass@{row.k}": row.value for row in overall}

    def train(self) -> list[dict[str, float]]:
        """Run to ``config.steps``; the metrics of every step."""
        from tqdm.auto import tqdm  # noqa: PLC0415 - a transformers dependency

        history: list[dict[str, float]] = []
        log = (self.out / "metrics.jsonl").open("a")
        bar = tqdm(total=self.config.steps, initial=self.step, desc="grpo", unit="step")
        started = time.perf_counter()
        try:
            for rollout, (rewards, valid), waited in self.rollouts():
                metrics = self.update(rollout, rewards, valid)
                metrics.update(generate_s=rollout.seconds, reward_wait_s=waited)
                metrics["elapsed_s"] = time.perf_counter() - started
                if self.config.eval_every and self.step % self.config.eval_every == 0:
                    metrics.update(self.evaluate_policy(bar.write))
                history.append(metrics)
                log.write(json.dumps(metrics) + "\n")
                log.flush()
                bar.set_postfix(reward=f"{metrics['reward_mean']:.3f}", kl=f"{metrics['kl']:.4f}")
                bar.update(1)
                if self.step % self.config.checkpoint_every == 0:
                    self.save_checkpoint()
        finally:
            bar.close()
            log.close()
        self.save_checkpoint()
        if history:
            plot(history, self.out / "curves.png")
        return history


def plot(history: list[dict[str, float]], path: Path) -> None:
    """Reward, KL and completion length against step, as a PNG."""
    import matplotlib  # noqa: PLC0415 - only the end of a run draws

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    steps = [m["step"] for m in history]
    figure, axes = plt.subplots(1, 3, figsize=(12, 3.2))
    for axis, key, title in zip(
        axes,
        ("reward_mean", "kl", "completion_tokens"),
        ("reward", "KL to reference", "tokens"),
        strict=True,
    ):
        axis.plot(steps, [m[key] for m in history])
        axis.set_title(title)
        axis.set_xlabel("step")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
