"""``tamarin/proof``: proof search in Tamarin as a stateless multi-turn environment."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import Field, model_validator

from environments.base import (
    Branch,
    EnvironmentInputError,
    EnvironmentUnavailable,
    EnvSpec,
    EpisodeFinished,
    Expansion,
    ResetResult,
    StepResult,
)
from environments.tamarin import episode
from environments.tamarin.backend import ProofBackend, Quantifier
from environments.tamarin.model import (
    MethodNotApplicable,
    NodeView,
    ProverCrashed,
    ProverTimeout,
    ProverUnavailable,
    TamarinError,
    one_line,
)
from environments.tamarin.provers import INSTALL_HINT, provers
from environments.tamarin.render import observation, resolve_action, view_info
from verifiers.base import Unavailable
from verifiers.numbers import Options
from verifiers.score import Score
from verifiers.tamarin.proof import render_proof
from verifiers.tamarin.theory import (
    MAX_THEORY_BYTES,
    Theory,
    TheoryError,
    UnknownLemma,
    parse_theory,
)

VERSION = "2"  # 2: the proof's size is a metric, not a component
MAX_STEPS = 500


class ProofOptions(Options):
    """Which lemma to prove, and the episode's limits."""

    theory: str | None = Field(
        None,
        max_length=200,
        description="A theory id this server offers (the reset's info lists them). Unset with "
        "no source: the seed picks a (theory, lemma) pair among those the server can serve.",
    )
    source: str | None = Field(
        None,
        max_length=MAX_THEORY_BYTES,
        description="Your own theory's .spthy text instead of an id (needs a Tamarin binary on "
        "the server). Oracle heuristics and #include are refused.",
    )
    lemma: str | None = Field(
        None, max_length=200, description="The lemma to prove; default: the theory's first."
    )
    max_steps: int = Field(
        MAX_STEPS, ge=1, le=MAX_STEPS, description="Method applications before truncation."
    )
    size_penalty: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="Final reward is max(0, 1 - size_penalty * proof size): favours short proofs.",
    )

    @model_validator(mode="after")
    def _one_theory(self) -> ProofOptions:
        if self.theory is not None and self.source is not None:
            raise ValueError("give a theory id or a source text, not both")
        if self.lemma is not None and self.theory is None and self.source is None:
            raise ValueError("a lemma needs its theory (or source)")
        return self


@dataclass(frozen=True)
class _Episode:
    """An opened state: the JSON plus what it resolves to on this server."""

    state: dict[str, Any]
    theory: Theory
    backend: ProofBackend


def _outcome(quantifier: Quantifier, found_trace: bool) -> str:
    """How a finished analysis reads for the lemma's quantifier."""
    if found_trace:
        return "trace_found" if quantifier == "exists-trace" else "falsified"
    return "no_trace" if quantifier == "exists-trace" else "verified"


class TamarinProofEnv:
    """Reset names a theory and lemma; each step applies one of Tamarin's ranked proof methods
    (by rank or text) to the open goal; the episode ends when the analysis is finished."""

    spec = EnvSpec(
        id="tamarin/proof",
        version=VERSION,
        family="tamarin",
        description="Prove a security-protocol lemma in the Tamarin prover by choosing proof "
        "methods; reward 1 when every case is closed or a trace is found (Cosler et al. 2026).",
        kind="multi_turn",
        action_format="A proof method's number (1 is Tamarin's own choice) or its text, e.g. "
        "'simplify' or 'solve( Client_1( S, k ) ▶₀ #i )'.",
        observation_format="text",
        options_model=ProofOptions,
        timeout_s=60.0,
        max_episode_steps=MAX_STEPS,
        actions_key="valid_actions",
    )

    # --- opening states ------------------------------------------------------------------------

    def _theory(self, theory_id: str | None, source: str | None) -> Theory:
        if source is not None:
            try:
                return parse_theory(source)
            except TheoryError as exc:
                raise EnvironmentInputError(f"source: {exc}") from None
        offered = provers().theories
        if theory_id not in offered:
            raise EnvironmentInputError(
                f"unknown theory {theory_id!r}; this server offers: "
                + (", ".join(provers().served) or "none")
            )
        return offered[theory_id]

    def _backend(self, theory: Theory) -> ProofBackend:
        try:
            return provers().backend(theory)
        except ProverUnavailable as exc:  # this server's configuration, not the caller's input
            raise EnvironmentUnavailable(Unavailable(str(exc), INSTALL_HINT)) from None

    def _open(self, state: Any) -> _Episode:
        if not isinstance(state, dict) or not {"theory", "lemma", "proof", "focus"} <= set(state):
            raise EnvironmentInputError("not a tamarin/proof state")
        theory = self._theory(state["theory"], state.get("source"))
        if theory.digest != state["digest"]:
            raise EnvironmentInputError(
                f"theory {state['theory']} has changed on this server since the episode began"
            )
        backend = self._backend(theory)
        if backend.prover != state["prover"]:
            raise EnvironmentInputError(
                f"the episode was started with {state['prover']}; this server runs "
                f"{backend.prover}, whose method lists differ"
            )
        episode.check_tree(state["proof"], state["max_steps"])
        return _Episode(state, theory, backend)

    # --- the contract --------------------------------------------------------------------------

    def reset(self, seed: int, options: ProofOptions) -> ResetResult:
        """Open the lemma's root. Raises EnvironmentInputError for an unknown theory or lemma,
        a refused theory, or a theory no prover here can serve."""
        theory_id, lemma = options.theory, options.lemma
        if theory_id is None and options.source is None:
            pairs = provers().servable()
            if not pairs:
                raise EnvironmentUnavailable(
                    Unavailable("this server can serve no theory", INSTALL_HINT)
                )
            theory_id, lemma = pairs[seed % len(pairs)]
        theory = self._theory(theory_id, options.source)
        backend = self._backend(theory)
        try:
            lemmas = backend.lemmas(theory)
        except TamarinError as exc:
            raise EnvironmentInputError(str(exc)) from None
        lemma = lemma or next(iter(lemmas))
        if lemma not in lemmas:
            raise EnvironmentInputError(
                f"theory {theory.name} has no lemma {lemma!r}; its lemmas: {', '.join(lemmas)}"
            )
        state: dict[str, Any] = {
            "theory": theory_id if options.source is None else None,
            "source": options.source,
            "digest": theory.digest,
            "lemma": lemma,
            "quantifier": lemmas[lemma],
            "prover": backend.prover,
            "proof": None,
            "focus": [],
            "steps": 0,
            "max_steps": options.max_steps,
            "size_penalty": options.size_penalty,
        }
        opened = _Episode(state, theory, backend)
        try:
            view = self._view(opened, state)
        except ProverUnavailable as exc:
            raise EnvironmentUnavailable(Unavailable(str(exc), INSTALL_HINT)) from None
        except (UnknownLemma, TheoryError, ProverCrashed) as exc:
            raise EnvironmentInputError(str(exc)) from None
        result = self._settle(opened, state, view)
        offered = {"lemmas": list(lemmas), "theories": provers().served}
        return ResetResult(result.observation, result.state, result.info | offered)

    def step(self, state: Any, action: str) -> StepResult:
        """Apply the method ``action`` names to the open goal."""
        opened = self._open(state)
        current = opened.state
        if current["focus"] is None:
            raise EpisodeFinished("the analysis is finished; reset for a new episode")
        try:
            view = self._view(opened, current)
        except TamarinError as exc:
            return self._unscored(current, exc)
        counted = {**current, "steps": current["steps"] + 1}
        rank = resolve_action(action, view)
        if rank is None:
            return self._invalid(opened, counted, view, f"no proof method {action!r} here")
        try:
            cases = opened.backend.apply(opened.theory, current["lemma"], self._path(current), rank)
            method = one_line(view.methods[rank - 1].text)
            proof = episode.graft(current["proof"], current["focus"], method, cases)
            grown = {**counted, "proof": proof, "focus": next(episode.open_goals(proof), None)}
            next_view = None if grown["focus"] is None else self._view(opened, grown)
        except MethodNotApplicable as exc:
            return self._invalid(opened, counted, view, f"Tamarin refused the method: {exc}")
        except TamarinError as exc:  # a timeout, off the recording, a crashed prover: no verdict
            return self._unscored(current, exc)
        return self._settle(opened, grown, next_view)

    def expand(self, state: Any, actions: Sequence[str] | None = None) -> list[Expansion]:
        """For tree search: every (or each named) method at the open goal, applied, with one
        branch per resulting case; each branch's state focuses that case. Unlike ``step`` this
        counts no steps: search budgets are the searcher's."""
        opened = self._open(state)
        current = opened.state
        if current["focus"] is None:
            raise EpisodeFinished("the analysis is finished; nothing to expand")
        view = self._view(opened, current)
        ranks: list[int] = []
        for action in (
            actions if actions is not None else [str(i) for i in range(1, len(view.methods) + 1)]
        ):
            rank = resolve_action(action, view)
            if rank is None:
                raise EnvironmentInputError(f"no proof method {action!r} at this goal")
            ranks.append(rank)
        return [self._expansion(opened, view, rank) for rank in ranks]

    def expert_action(self, state: Any) -> str:
        """Method 1: Tamarin's own ranking, which reproduces its autoprover's proof."""
        del state
        return "1"

    # --- helpers -------------------------------------------------------------------------------

    @staticmethod
    def _path(state: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        return episode.path_to(state["proof"], state["focus"])

    def _view(self, opened: _Episode, state: dict[str, Any]) -> NodeView:
        return opened.backend.observe(opened.theory, state["lemma"], self._path(state))

    def _expansion(self, opened: _Episode, view: NodeView, rank: int) -> Expansion:
        current = opened.state
        method = one_line(view.methods[rank - 1].text)
        try:
            cases = opened.backend.apply(opened.theory, current["lemma"], self._path(current), rank)
            proof = episode.graft(current["proof"], current["focus"], method, cases)
            branches = []
            for position, name in enumerate(cases):
                focus = [*current["focus"], position]
                child = {**current, "proof": proof, "focus": focus}
                branches.append(self._branch(opened, child, name))
        except MethodNotApplicable as exc:
            return Expansion(method, Score.invalid(f"Tamarin refused the method: {exc}"), ())
        except TamarinError as exc:  # as in step: a timeout, off the recording, a crashed prover
            return Expansion(method, _no_verdict(exc), ())
        return Expansion(method, Score.ok(0.0), tuple(branches))

    def _branch(self, opened: _Episode, child: dict[str, Any], name: str) -> Branch:
        view = self._view(opened, child)
        settled = self._settle(opened, child, view)
        return Branch(
            name=name,
            observation=settled.observation,
            state=settled.state,
            terminated=settled.terminated,
            reward=settled.score.reward,
            info=settled.info,
        )

    def _settle(
        self,
        opened: _Episode,
        state: dict[str, Any],
        view: NodeView | None,
    ) -> StepResult:
        """The step result once ``state`` (with its focus, or None) and the focused node's
        ``view`` are known: a solved node ends the analysis with a trace, no open goal ends it
        with a proof, an unfinishable node ends it with nothing."""
        quantifier = state["quantifier"]
        outcome: str | None = None
        if view is not None and view.status == "solved":
            state = {
                **state,
                "proof": episode.graft(state["proof"], state["focus"], "SOLVED", ()),
                "focus": None,
            }
            outcome = _outcome(quantifier, found_trace=True)
        elif view is not None and view.status == "unfinishable":
            state = {**state, "focus": None}
            outcome = "unfinishable"
        elif view is None:
            outcome = _outcome(quantifier, found_trace=False)
        info = {
            "theory": state["theory"] or opened.theory.name,
            "lemma": state["lemma"],
            "quantifier": quantifier,
            "backend": opened.backend.name,
            "prover": state["prover"],
            "proof_size": episode.size(state["proof"]),
            "open_goals": sum(1 for _ in episode.open_goals(state["proof"])),
            "steps": state["steps"],
        }
        if outcome is not None:
            size = episode.size(state["proof"])
            penalised = max(0.0, 1.0 - state["size_penalty"] * size)
            reward = 0.0 if outcome == "unfinishable" else penalised
            script = render_proof(episode.to_proof_tree(state["proof"]))
            info |= {"outcome": outcome, "proof": script}
            score = Score.ok(reward, metrics={"proof_size": float(size)}, detail=outcome)
            return StepResult(
                f"Analysis finished: {outcome.replace('_', ' ')} ({size} steps).\n\n{script}",
                score,
                terminated=True,
                truncated=False,
                state=state,
                info=info,
            )
        assert view is not None
        truncated = state["steps"] >= state["max_steps"]
        info |= view_info(view) | {"path": [name for _, name in self._path(state)]}
        return StepResult(
            observation(opened.theory.name, state["lemma"], quantifier, info["path"], view),
            Score.ok(0.0),
            terminated=False,
            truncated=truncated,
            state=state,
            info=info,
        )

    def _invalid(
        self, opened: _Episode, state: dict[str, Any], view: NodeView, detail: str
    ) -> StepResult:
        settled = self._settle(opened, state, view)
        return StepResult(
            settled.observation,
            Score.invalid(detail),
            terminated=False,
            truncated=settled.truncated,
            state=settled.state,
            info=settled.info,
        )

    @staticmethod
    def _unscored(state: dict[str, Any], exc: TamarinError) -> StepResult:
        # No verdict: the state is unchanged so the step can be retried.
        return StepResult("", _no_verdict(exc), terminated=False, truncated=False, state=state)


def _no_verdict(exc: TamarinError) -> Score:
    """A prover that timed out is ``timeout``; anything else that kept it from answering (a
    crash, a node off the recording) is ``error``: never a reward."""
    return Score.timeout(str(exc)) if isinstance(exc, ProverTimeout) else Score.error(str(exc))
