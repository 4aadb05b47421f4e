"""The tamarin family's search space for ``envserver audit --search`` (issue 38).

Probes are episodes of ``tamarin/proof``: a theory and lemma this server serves, and actions.

- **Seeds**: Tamarin's own proof of a servable lemma, by rank (``1`` at every goal, which is
  how the recorded proofs were made) and by method text; both deserve the win.
- **Moves**: the generic episode moves (``environments.mutators.episode_moves``: truncate,
  repeat, insert, swap, hostile arguments, another lemma's proof) and two of Tamarin's:
  ``skip`` (a proof step left out) and ``source`` (the lemma's theory sent as a ``source``
  text, changed, under the recorded theory's name).
- **Judge**: an independent replay over the recorded graph of real Tamarin states (the
  recordings, not the environment's episode code): the episode's goals are kept in
  depth-first order, each action is read *generously* (every method it could name: a rank, a
  method text compared without white space or case, ``contradiction``, ``simplify`` or
  ``induction`` alone), an action naming no recorded expansion ends that reading without
  reward (the environment answers ``error`` off the recording), and the mutant deserves the
  win when some reading of its actions closes every goal or focuses a found trace within its
  step limit, else 0. Generous readings keep the judge an upper bound: whatever the
  environment legitimately accepts is among them.

The judge decides only what the recording decides: on a server with a Tamarin prover (any
theory is played live, where proofs the recording lacks exist) it answers None, and a
``source`` that is not byte for byte a recorded text deserves 0 only where no prover runs.
Over HTTP the judge assumes the server is configured as this process is.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, lru_cache

from environments.mutators import episode_moves
from environments.search import Move, Mutant, Probe, SearchSpace
from environments.tamarin.family import ProofOptions, TamarinProofEnv
from environments.tamarin.model import NodeView
from environments.tamarin.provers import provers
from environments.tamarin.recordings import RecordedTheory

ENV = "tamarin/proof"
SEEDS_PER_DRAW = 4
MAX_PROOF_STEPS = 300
"""Longest expert proof a seed replays (the recorded ones take at most 92 applications)."""
_RANK_READING = re.compile(r"(?:method)?#?(\d+)\.?")
_BY_ITSELF = ("contradiction", "simplify", "induction")


# --- seeds -----------------------------------------------------------------------------------


@cache
def _env() -> TamarinProofEnv:
    return TamarinProofEnv()


@lru_cache(maxsize=64)
def expert_proof(theory: str, lemma: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Tamarin's own proof of ``lemma`` as the ranks and the method texts a policy would send
    (``1`` at each goal), or None where it does not end with the win within the limit."""
    env = _env()
    opened = env.reset(0, ProofOptions(theory=theory, lemma=lemma))
    state, info = opened.state, opened.info
    texts: list[str] = []
    while len(texts) < MAX_PROOF_STEPS and info.get("methods"):
        texts.append(str(info["methods"][0]["text"]))
        result = env.step(state, "1")
        if result.score.status != "ok":
            return None
        if result.terminated or result.truncated:
            won = result.terminated and result.score.reward == 1.0
            return (("1",) * len(texts), tuple(texts)) if won else None
        state, info = result.state, result.info
    return None


def episode(theory: str, lemma: str, actions: Sequence[str], origin: str) -> Probe:
    """A probe: ``actions`` played on ``lemma`` of the offered ``theory``."""
    return Probe(
        env=ENV,
        seed=0,
        options={"theory": theory, "lemma": lemma},
        actions=tuple(actions),
        origin=origin,
    )


def seeds(rng: random.Random) -> Iterator[Mutant]:
    """Tamarin's proofs of servable lemmas, by rank or by text: each deserves the win."""
    pairs = provers().servable()
    for theory, lemma in rng.sample(pairs, min(SEEDS_PER_DRAW, len(pairs))):
        proof = expert_proof(theory, lemma)
        if proof is not None:
            by_text = rng.random() < 0.5
            actions = proof[1] if by_text else proof[0]
            yield Mutant(
                episode(theory, lemma, actions, "expert.text" if by_text else "expert"), 1.0
            )


def elsewhere(probe: Probe, rng: random.Random) -> Sequence[str]:
    """Another servable lemma's proof, by method text."""
    pairs = [pair for pair in provers().servable() if pair[1] != probe.options.get("lemma")]
    if not pairs:
        return ()
    proof = expert_proof(*rng.choice(pairs))
    return proof[1] if proof is not None else ()


# --- Tamarin's own moves ---------------------------------------------------------------------


def _skip(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """A proof with one step left out (the rest then applies at other goals)."""
    probe = parent.probe
    if probe.env == ENV and probe.actions and len(probe.actions) > 1:
        at = rng.randrange(len(probe.actions))
        yield Mutant(probe.played([*probe.actions[:at], *probe.actions[at + 1 :]], "skip"))


_ADDITIONS = ("\nrule Forged: [ ] --[ Forged() ]-> [ ]\n", "\n// reviewed\n")


def _source(parent: Mutant, rng: random.Random) -> Iterator[Mutant]:
    """The lemma's theory sent as ``source`` under its recorded name, but another text: a rule
    added, a comment added, the lemma's quantifier flipped. Only a prover may play it."""
    probe = parent.probe
    theory_id = probe.options.get("theory")
    if probe.env != ENV or not isinstance(theory_id, str):
        return
    theory = provers().theories.get(theory_id)
    if theory is None:
        return
    text = theory.text
    header = re.search(r"^\s*theory\s+\w+\s+begin\b", text, re.MULTILINE)
    if header is None:
        return
    if rng.random() < 0.3:
        changed = re.sub(r"\ball-traces\b", "exists-trace", text, count=1)
    else:
        changed = text[: header.end()] + rng.choice(_ADDITIONS) + text[header.end() :]
    if changed != text:
        options = {"source": changed, "lemma": probe.options.get("lemma")}
        moved = Probe(
            env=ENV,
            seed=probe.seed,
            options=options,
            actions=probe.actions,
            origin=f"{probe.origin} > source",
        )
        yield Mutant(moved, None)


# --- the judge -------------------------------------------------------------------------------


def _squashed(text: str) -> str:
    return "".join(text.split()).lower()


def readings(action: str, view: NodeView) -> set[int]:
    """Every rank ``action`` could name at a node showing ``view``: a superset of what the
    environment accepts (a rank, ``method 2``, ``#2``, ``2.``; a method's text without white
    space, in any case, with or without ``by``; ``contradiction``, ``simplify`` or
    ``induction`` alone)."""
    squashed = _squashed(action)
    found: set[int] = set()
    rank = _RANK_READING.fullmatch(squashed)
    if rank is not None and 1 <= int(rank[1]) <= len(view.methods):
        found.add(int(rank[1]))
    for wanted in {squashed, squashed.removeprefix("by")}:
        for position, method in enumerate(view.methods, start=1):
            if wanted and (
                _squashed(method.text) == wanted or (wanted in _BY_ITSELF and method.kind == wanted)
            ):
                found.add(position)
    return found


Goals = tuple[str, ...]
"""The open goals of an episode in depth-first order (recorded node ids); the first is focused."""


def could_win(recorded: RecordedTheory, lemma: str, actions: Sequence[str], max_steps: int) -> bool:
    """Whether some reading of ``actions`` wins ``lemma``'s episode on the recorded graph."""
    if lemma not in recorded.roots:
        return False
    frontier: set[Goals] = {(recorded.roots[lemma],)}
    for action in actions[:max_steps]:
        after: set[Goals] = set()
        for goals in frontier:
            if _won(recorded, goals):
                return True
            node = recorded.nodes.get(goals[0])
            if node is None or node.view.status == "unfinishable":
                continue  # off the recording, or an unfinishable branch: no reward
            chosen = readings(action, node.view)
            if not chosen:
                after.add(goals)  # an invalid action: a step spent, nothing moves
            for rank in chosen & set(node.expansions):  # another rank: error, no reward
                after.add((*node.expansions[rank].values(), *goals[1:]))
        frontier = after
    return any(_won(recorded, goals) for goals in frontier)


def _won(recorded: RecordedTheory, goals: Goals) -> bool:
    """Every goal closed, or a found trace in focus."""
    if not goals:
        return True
    node = recorded.nodes.get(goals[0])
    return node is not None and node.view.status == "solved"


def deserves(probe: Probe) -> float | None:
    """What the recording says ``probe`` may earn: 1.0 when some reading of its actions wins,
    else 0; a source text no recording printed deserves 0 on a server without a prover; None
    where a prover plays (the recording does not bound it) or the probe names no lemma."""
    if probe.env != ENV or probe.actions is None:
        return None
    options: Mapping[str, object] = probe.options
    lemma = options.get("lemma")
    if not isinstance(lemma, str) or not (provers().choice == "replay" or provers().live is None):
        return None
    source = options.get("source")
    if isinstance(source, str):
        text = source
    elif (theory := provers().theories.get(str(options.get("theory")))) is not None:
        text = theory.text
    else:
        return None
    # Only a recorded text replays; any other needs a prover, which this server lacks.
    recorded = next((t for t in provers().replay.recorded.values() if t.source == text), None)
    if recorded is None:
        return 0.0
    max_steps = options.get("max_steps", 500)
    steps = max_steps if isinstance(max_steps, int) else 500
    return 1.0 if could_win(recorded, lemma, probe.actions, steps) else 0.0


SEARCH = SearchSpace(
    seeds=seeds,
    mutators=(*episode_moves(elsewhere), Move("skip", _skip), Move("source", _source)),
    deserves=deserves,
)
