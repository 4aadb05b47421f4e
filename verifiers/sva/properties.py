"""Property semantics on a lasso: ``at(p, t)`` is "the evaluation attempt of p started at cycle
t succeeds" for t < k; later cycles fold onto the loop (the trace repeats, and so does every
property's value). Unbounded operators range over one lap, t' in [t, t + k), which covers
every cycle of the loop at least once, so liveness is decided exactly on the lasso.
"""

from __future__ import annotations

from . import ir
from .expressions import ExprEncoder
from .horizon import prop_span, unbounded
from .lasso import BoolLike, Lasso, mk_and, mk_not, mk_or
from .sequences import SeqEncoder


def unbounded_seq(s: ir.Seq) -> bool:
    """Whether ``s`` has matches of unbounded length."""
    if isinstance(s, ir.SBool):
        return False
    if isinstance(s, ir.SDelay):
        return s.hi is None or unbounded_seq(s.rhs) or (s.lhs is not None and unbounded_seq(s.lhs))
    if isinstance(s, ir.SRepeat):
        return s.hi is None or unbounded_seq(s.seq)
    if isinstance(s, ir.SBin):
        if s.op == "or":
            return unbounded_seq(s.left) or unbounded_seq(s.right)
        if s.op == "intersect":
            return unbounded_seq(s.left) and unbounded_seq(s.right)
        return unbounded_seq(s.left) or unbounded_seq(s.right)
    return unbounded_seq(s.seq)


class PropEncoder:
    """Encodes the properties of one assertion over a shared lasso.

    For ``disable iff`` (IEEE mode) an attempt is also evaluated on *truncated* words (Annex F:
    the trace up to cycle i - 1, then the letter "top" forever): an encoder with ``cut`` = i
    reads every Boolean at a cycle >= i as ``top`` (the letter top satisfies every Boolean, its
    complement "bottom" none). Negation complements the word, swapping top and bottom, and so
    does an implication's antecedent, so each truncated encoder has a ``dual`` of the other
    polarity; the plain encoder is its own dual.
    """

    def __init__(
        self,
        lasso: Lasso,
        exprs: ExprEncoder,
        window: int,
        unmarked_strong: bool,
        *,
        cut: int | None = None,
        top: bool = True,
        dual: PropEncoder | None = None,
    ) -> None:
        self.lasso = lasso
        self.exprs = exprs
        self.k = lasso.k
        self.window = window
        self.unmarked_strong = unmarked_strong
        self.cut = cut
        self.top = top
        self.seqs = SeqEncoder(self._leaf, window, lasso.tick)
        # Weak unbounded sequences: "no finite prefix refutes", read as "some match exists when
        # every cycle past the window is taken to satisfy every Boolean" (bounded).
        self.optimistic = SeqEncoder(self._leaf_optimistic, window + window // 2 + 2, lasso.tick)
        self._memo: dict[tuple[int, int], BoolLike] = {}
        self._leaves: dict[tuple[int, int], BoolLike] = {}
        self._keep: list[object] = []
        self._truncated: dict[int, PropEncoder] = {}
        if cut is None:
            self.dual = self
        elif dual is not None:
            self.dual = dual
        else:
            self.dual = PropEncoder(
                lasso, exprs, window, unmarked_strong, cut=cut, top=not top, dual=self
            )

    # -- Booleans of the trace ----------------------------------------------------------------
    def _leaf(self, e: ir.Expr, j: int) -> BoolLike:
        if self.cut is not None and j >= self.cut:
            return self.top
        key = (id(e), j)
        got = self._leaves.get(key)
        if got is None:
            self._keep.append(e)
            if j >= self.k:
                got = self.lasso.fold(("leaf", id(e)), j, lambda i: self._leaf(e, i))
            else:
                got = self.exprs.truth(e, j)
            self._leaves[key] = got
        return got

    def _leaf_optimistic(self, e: ir.Expr, j: int) -> BoolLike:
        return True if j >= self.window else self._leaf(e, j)

    # -- Properties ---------------------------------------------------------------------------
    def assertion(self, p: ir.Prop, disable: ir.Expr | None = None) -> BoolLike:
        """``assert property (p)``: every attempt, started at every cycle, succeeds; with
        ``disable`` (``disable iff``, IEEE 1800 16.12.14 and Annex F) an attempt also passes
        when the condition holds at some cycle i from its start and the attempt has not
        failed by then: p holds on the trace cut at i and followed by top letters."""
        if disable is not None:
            return mk_and([self.attempt(p, disable, t) for t in range(self.k)])
        if isinstance(p, ir.PBin) and p.op == "and":
            return mk_and([self.assertion(p.left), self.assertion(p.right)])
        if isinstance(p, ir.PImpl) and not p.follows:
            # G(s |-> q) = every match of s from any start is followed by q: one forward pass
            # over the union of all starts instead of one pass per start.
            fire = self._consequent_starts(p, dict.fromkeys(range(self.k), True))
            return mk_and([mk_or([mk_not(c), self.at(p.prop, e)]) for e, c in fire.items()])
        return mk_and([self.at(p, t) for t in range(self.k)])

    def attempt(self, p: ir.Prop, disable: ir.Expr | None, t: int) -> BoolLike:
        """The attempt of ``disable iff (disable) p`` from t passes or is disabled. Only
        cycles up to ``reach`` after t can matter: past the span of a bounded p the cut changes
        nothing, and an unbounded p sees the disable condition within one lap if it ever
        holds."""
        if disable is None:
            return self.at(p, t)
        reach = self.k if unbounded(p) else prop_span(p) + 1
        options = [self.at(p, t)]
        for i in range(t, t + reach):
            hit = self._leaf(disable, i)
            if hit is not False:
                options.append(mk_and([hit, self.truncated(i).at(p, t)]))
        return mk_or(options)

    def truncated(self, cut: int) -> PropEncoder:
        """The top-polarity encoder of the trace cut at ``cut`` (built once per cut). A word
        already cut at or before ``cut`` (only a top one reaches here: a bottom word's condition
        never holds past its cut) is its own truncation."""
        if self.cut is not None and cut >= self.cut:
            return self
        got = self._truncated.get(cut)
        if got is None:
            window = cut + self.window - self.k
            got = PropEncoder(self.lasso, self.exprs, window, self.unmarked_strong, cut=cut)
            self._truncated[cut] = got
        return got

    def antecedent_matches(self, p: ir.Prop) -> list[BoolLike]:
        """For each implication in ``p``: "its antecedent matches from some cycle"."""
        out: list[BoolLike] = []
        self._antecedents(p, out)
        return out

    def _antecedents(self, p: ir.Prop, out: list[BoolLike]) -> None:
        if isinstance(p, ir.PImpl):
            if not p.follows:
                fire = self._consequent_starts(p, dict.fromkeys(range(self.k), True))
                out.append(mk_or(list(fire.values())))
            self._antecedents(p.prop, out)
        elif isinstance(p, ir.PBin | ir.PUntil):
            self._antecedents(p.left, out)
            self._antecedents(p.right, out)
        elif isinstance(p, ir.PNot | ir.PNext | ir.PAlways | ir.PEventually):
            self._antecedents(p.prop, out)
        elif isinstance(p, ir.PIf):
            self._antecedents(p.then, out)
            if p.other is not None:
                self._antecedents(p.other, out)

    def _consequent_starts(self, p: ir.PImpl, starts: dict[int, BoolLike]) -> dict[int, BoolLike]:
        """cycle -> "an antecedent match from ``starts`` starts the consequent here".

        ``|->``/``#-#``: at the end of each non-empty match (an empty match never triggers an
        overlapped consequent, IEEE 1800 16.12.7). ``|=>``/``#=#`` are ``s ##1 1'b1 |-> p`` /
        ``#-#``: one cycle after each end, and an empty match (recorded at j - 1) triggers the
        consequent at its own start j, as ``empty ##1 1'b1`` matches there."""
        # |-> and |=> read their antecedent on the complemented word (Annex F); #-# and #=#
        # are not (s |-> not p), so theirs is read on the word itself.
        seqs = self.seqs if p.follows else self.dual.seqs
        ne, em = seqs.ends(p.seq, starts)
        if p.overlapped:
            return ne
        ends: dict[int, list[BoolLike]] = {}
        for vec in (ne, em):
            for e, c in vec.items():
                ends.setdefault(e + 1, []).append(c)
        return {e: mk_or(cs) for e, cs in ends.items()}

    def at(self, p: ir.Prop, t: int) -> BoolLike:
        """The attempt of ``p`` started at cycle t succeeds."""
        if self.cut is not None and t > self.cut:
            t = self.cut  # the word is constant from the cut on, and so is every property
        key = (id(p), t)
        got = self._memo.get(key)
        if got is None:
            self._keep.append(p)
            if t >= self.k and self.cut is None:
                got = self.lasso.fold(("prop", id(p)), t, lambda i: self.at(p, i))
            else:
                self.lasso.tick()
                got = self._at(p, t)
            self._memo[key] = got
        return got

    def _lap(self, t: int, lo: int, hi: int | None) -> range:
        if hi is not None:
            return range(t + lo, t + hi + 1)
        if self.cut is not None:
            # Up to the cut, past which every cycle reads the same.
            return range(t + lo, max(t + lo, self.cut) + 1)
        return range(t + lo, t + lo + self.k)

    def _at(self, p: ir.Prop, t: int) -> BoolLike:
        if isinstance(p, ir.PConst):
            return p.value
        if isinstance(p, ir.PSeq):
            strong = p.strength == "strong" or (p.strength == "unmarked" and self.unmarked_strong)
            if not strong and unbounded_seq(p.seq):
                ne, _ = self.optimistic.ends(p.seq, {t: True})
            else:
                # On infinite traces weak and strong agree for bounded sequences.
                ne, _ = self.seqs.ends(p.seq, {t: True})
            return mk_or(list(ne.values()))
        if isinstance(p, ir.PNot):
            return mk_not(self.dual.at(p.prop, t))
        if isinstance(p, ir.PBin):
            a, b = self.at(p.left, t), self.at(p.right, t)
            if p.op == "and":
                return mk_and([a, b])
            if p.op == "or":
                return mk_or([a, b])
            # implies = (not a) or b; iff = (a implies b) and (b implies a) (16.12.8)
            not_a, not_b = mk_not(self.dual.at(p.left, t)), mk_not(self.dual.at(p.right, t))
            if p.op == "implies":
                return mk_or([not_a, b])
            return mk_and([mk_or([not_a, b]), mk_or([not_b, a])])
        if isinstance(p, ir.PImpl):
            fire = self._consequent_starts(p, {t: True})
            if p.follows:
                return mk_or([mk_and([c, self.at(p.prop, e)]) for e, c in fire.items()])
            return mk_and([mk_or([mk_not(c), self.at(p.prop, e)]) for e, c in fire.items()])
        if isinstance(p, ir.PIf):
            # (b |-> then) and (!b |-> other) (16.12.10): the conditions are antecedents.
            c = self.dual._leaf(p.cond, t)
            not_c = mk_not(c) if self.dual.cut is None or t < self.dual.cut else self.dual.top
            then = self.at(p.then, t)
            other = True if p.other is None else self.at(p.other, t)
            return mk_and([mk_or([mk_not(c), then]), mk_or([mk_not(not_c), other])])
        if isinstance(p, ir.PNext):
            return self.at(p.prop, t + p.n)
        if isinstance(p, ir.PAlways):
            return mk_and([self.at(p.prop, i) for i in self._lap(t, p.lo, p.hi)])
        if isinstance(p, ir.PEventually):
            return mk_or([self.at(p.prop, i) for i in self._lap(t, p.lo, p.hi)])
        if isinstance(p, ir.PUntil):
            # First-occurrence form over one lap: if q ever holds from t, it holds in the lap
            # (truncated: up to the cut, where the rest of the word is one repeated letter).
            span = range(t, t + self.k) if self.cut is None else range(t, max(t, self.cut) + 1)
            holds_before: list[BoolLike] = []
            options: list[BoolLike] = []
            for i in span:
                q = self.at(p.right, i)
                here = self.at(p.left, i) if p.inclusive else True
                options.append(mk_and([q, here, *holds_before]))
                holds_before = [mk_and([*holds_before, self.at(p.left, i)])]
            if not p.strong:
                options.append(mk_and(holds_before))
            return mk_or(options)
        raise AssertionError(f"unknown property {p!r}")
