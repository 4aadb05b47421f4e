"""The front end: pyslang parses and elaborates the candidate (inside the task's testbench, or in
a generated module over declared free signals) and its typed AST becomes the checker's IR.

pyslang is C++: every size and nesting limit is enforced here, on the text, before it runs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from pyslang import ast, syntax

from . import ir
from .api import Assertion, Signal, SvaError

MAX_TEXT = 20_000  # characters of one assertion; FVEval's longest reference is under 500
MAX_TESTBENCH = 2_000_000
MAX_NESTING = 200  # bracket depth of the assertion text
MAX_WIDTH = 512  # bits of one expression
MAX_DELAY = 256  # largest delay, repetition or range bound accepted

_LEADING_ASSERT = re.compile(r"^\s*(?:[A-Za-z_]\w*\s*:\s*)?(assert|assume|cover|restrict)\b")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")

A = ast.AssertionExprKind
E = ast.ExpressionKind
U = ast.UnaryAssertionOperator
B = ast.BinaryAssertionOperator


@dataclass
class _Ctx:
    allowed: set[str] | None
    signals: dict[str, Signal]
    in_property_body: bool = True


def _nesting(text: str) -> int:
    depth = best = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            best = max(best, depth)
        elif ch in ")]}":
            depth -= 1
    return best


def _wrap(text: str) -> str:
    """The candidate as one concurrent assertion statement."""
    if _LEADING_ASSERT.match(text):
        return text if text.rstrip().endswith(";") else text + ";"
    body = text.strip().rstrip(";")
    # A bare property: clock it on the testbench's clk unless it names its own clock.
    if body.startswith("@"):
        return f"assert property ({body}\n);"
    return f"assert property (@(posedge clk) {body}\n);"


def _free_module(widths: dict[str, int]) -> tuple[str, str]:
    ports = ["input logic clk"]
    for name, width in sorted(widths.items()):
        if not _IDENT.match(name) or name == "clk":
            raise SvaError("signal", f"bad signal name {name!r}")
        if not 1 <= width <= MAX_WIDTH:
            raise SvaError("too_large", f"signal {name} has width {width}")
        rng = f"[{width - 1}:0] " if width > 1 else ""
        ports.append(f"input logic {rng}{name}")
    head = "module __sva_free(" + ", ".join(ports) + ");\n"
    return head, "\nendmodule\n"


def _split_testbench(testbench: str) -> tuple[str, str]:
    at = testbench.rfind("endmodule")
    if at < 0:
        raise SvaError("elaboration", "the testbench has no module")
    return testbench[:at] + "\n", "\n" + testbench[at:]


def _diag_message(engine: Any, diag: Any) -> str:
    return str(engine.formatMessage(diag))


def _compile(source: str) -> tuple[Any, Any]:
    tree = syntax.SyntaxTree.fromText(source)
    comp = ast.Compilation()
    comp.addSyntaxTree(tree)
    return tree, comp


# Diagnostics slang reports as warnings that still make an assertion meaningless here.
_FATAL_WARNINGS = {"UnknownSystemName"}


def _errors(tree: Any, comp: Any) -> list[tuple[str, int, str]]:
    from pyslang import DiagnosticEngine

    engine = DiagnosticEngine(comp.sourceManager)
    parsed = {(str(d.code), int(d.location.offset)) for d in tree.diagnostics}
    out = []
    for d in comp.getAllDiagnostics():
        name = str(d.code).removeprefix("DiagCode(").removesuffix(")")
        if d.isError() or name in _FATAL_WARNINGS:
            where = int(d.location.offset)
            kind = "syntax" if (str(d.code), where) in parsed else "elaboration"
            out.append((kind, where, _diag_message(engine, d)))
    return out


def _assertions_in(comp: Any, lo: int, hi: int) -> tuple[list[Any], list[str]]:
    """Concurrent assertion statements whose source starts in [lo, hi), and the kinds of any
    other members declared there (there must be none: the text is one assertion)."""
    found: list[Any] = []
    extra: list[str] = []
    stack = list(comp.getRoot().topInstances)
    seen = 0
    while stack and seen < 10_000:
        inst = stack.pop()
        seen += 1
        for m in inst.body:
            off = int(m.location.offset)
            inside = lo <= off < hi and m.location.buffer == inst.body.location.buffer
            if m.kind == ast.SymbolKind.ProceduralBlock:
                st = m.body
                # A labelled assertion is wrapped in a named sequential block.
                while st.kind == ast.StatementKind.Block:
                    st = st.body
                if st.kind == ast.StatementKind.ConcurrentAssertion and (
                    lo <= int(st.sourceRange.start.offset) < hi
                ):
                    found.append(st)
                    continue
            elif m.kind == ast.SymbolKind.Instance:
                stack.append(m)
            if inside and m.kind != ast.SymbolKind.StatementBlock:
                extra.append(m.kind.name)
    return found, extra


@functools.lru_cache(maxsize=4096)
def parse_cached(
    text: str,
    testbench: str | None,
    allowed: frozenset[str] | None,
    widths: tuple[tuple[str, int], ...] | None,
) -> Assertion:
    """``parse`` behind a cache; any failure of the compiler binding becomes an SvaError."""
    try:
        return parse(text, testbench, None if allowed is None else set(allowed), dict(widths or ()))
    except SvaError:
        raise
    except RecursionError as exc:
        raise SvaError("too_large", "the assertion is nested too deeply") from exc
    except Exception as exc:  # a binding or conversion failure must not crash a worker
        raise SvaError("unsupported", f"could not convert the assertion: {exc}") from exc


def parse(
    text: str,
    testbench: str | None,
    allowed: set[str] | None,
    widths: dict[str, int] | None,
) -> Assertion:
    """Parse, elaborate and convert one assertion (see ``api.parse_assertion``)."""
    if not isinstance(text, str) or not text.strip():
        raise SvaError("syntax", "empty assertion")
    if len(text) > MAX_TEXT:
        raise SvaError("too_large", f"assertion text of {len(text)} characters (limit {MAX_TEXT})")
    if _nesting(text) > MAX_NESTING:
        raise SvaError("too_large", f"brackets nested deeper than {MAX_NESTING}")
    if "\x00" in text:
        raise SvaError("syntax", "NUL character in the assertion")
    if re.search(r"\b(module|endmodule|interface|package|class|program)\b", text):
        raise SvaError("syntax", "expected one assertion, found a design unit")
    if re.search(r"`", text):
        raise SvaError("syntax", "compiler directives are not allowed in an assertion")
    stmt = _wrap(text)
    if testbench is not None:
        if len(testbench) > MAX_TESTBENCH:
            raise SvaError("too_large", "testbench too large")
        head, tail = _split_testbench(testbench)
    else:
        head, tail = _free_module(dict(widths or {}))
    source = head + stmt + tail
    lo, hi = len(head), len(head) + len(stmt)
    tree, comp = _compile(source)
    errors = _errors(tree, comp)
    mine = [e for e in errors if lo <= e[1] < hi]
    if mine:
        kind, _, msg = mine[0]
        raise SvaError("syntax" if kind == "syntax" else "elaboration", msg)
    if errors:
        # Errors elsewhere: the candidate broke the surrounding module (or the testbench
        # itself is broken; either way nothing can be checked).
        base = _errors(*_compile(head + tail))
        if len(errors) > len(base):
            kind, _, msg = errors[len(base) if len(base) < len(errors) else 0]
            raise SvaError("syntax" if kind == "syntax" else "elaboration", msg)
    found, extra = _assertions_in(comp, lo, hi)
    if len(found) != 1:
        raise SvaError("syntax", f"expected exactly one concurrent assertion, found {len(found)}")
    if extra:
        raise SvaError("syntax", f"the assertion text also declares: {', '.join(extra)}")
    st = found[0]
    if st.assertionKind == ast.AssertionKind.Assume:
        # An assumption constrains the inputs instead of checking them: with a design, an
        # `assume property (1'b0)` makes every assertion pass. The task asks for an assertion.
        raise SvaError("unsupported", "assume statements: the answer must be an assertion")
    if st.assertionKind != ast.AssertionKind.Assert:
        raise SvaError("unsupported", f"{st.assertionKind.name.lower()} statements")
    ctx = _Ctx(allowed=allowed, signals={})
    result = _convert_top(st.propertySpec, ctx)
    return Assertion(
        text=text,
        signals=tuple(sorted(ctx.signals.values(), key=lambda s: s.name)),
        disable_iff=None if result.disable is None else repr(result.disable),
        ir=result,
    )


# ---------------------------------------------------------------------------------------------
# Assertion expressions.


def _convert_top(spec: Any, ctx: _Ctx) -> ir.AssertionIR:
    clock = "default"
    expr = spec
    if expr.kind == A.Clocking:
        ev = expr.clocking
        if ev.kind != ast.TimingControlKind.SignalEvent or ev.iffCondition is not None:
            raise SvaError("unsupported", "only a simple edge clocking event is supported")
        if ev.expr.kind != E.NamedValue:
            raise SvaError("unsupported", "the clock must be a plain signal")
        clock = f"{ev.edge.name}:{ev.expr.symbol.name}"
        expr = expr.expr
    disable: ir.Expr | None = None
    if expr.kind == A.DisableIff:
        ctx.in_property_body = False
        disable = _expr(expr.condition, ctx)
        ctx.in_property_body = True
        expr = expr.expr
    return ir.AssertionIR(prop=_prop(expr, ctx), disable=disable, clock=clock)


def _is_seq(e: Any) -> bool:
    k = e.kind
    if k in (A.Simple, A.SequenceConcat, A.FirstMatch, A.SequenceWithMatch):
        return True
    if k == A.Binary:
        if e.op in (B.Intersect, B.Throughout, B.Within):
            return True
        if e.op in (B.And, B.Or):
            return _is_seq(e.left) and _is_seq(e.right)
    return False


def _bound(v: Any) -> int:
    n = int(v)
    if n < 0 or n > MAX_DELAY:
        raise SvaError("unsupported", f"delay or repetition bound {n} (limit {MAX_DELAY})")
    return n


def _range(r: Any) -> tuple[int, int | None]:
    lo = _bound(r.min)
    hi = None if r.max is None else _bound(r.max)
    return lo, hi


def _seq(e: Any, ctx: _Ctx) -> ir.Seq:
    k = e.kind
    if k == A.SequenceWithMatch:
        if len(e.matchItems):
            raise SvaError("unsupported", "sequence match items (local variables)")
        inner = _seq(e.expr, ctx)
        if e.repetition is None:
            return inner
        lo, hi = _range(e.repetition.range)
        if e.repetition.kind.name != "Consecutive":
            raise SvaError("unsupported", "goto/non-consecutive repetition of a sequence")
        return ir.SRepeat(inner, lo, hi)
    if k == A.Simple:
        base: ir.Seq = ir.SBool(_expr(e.expr, ctx))
        if e.repetition is None:
            return base
        rep = e.repetition
        lo, hi = _range(rep.range)
        kind = rep.kind.name
        if kind == "Consecutive":
            return ir.SRepeat(base, lo, hi)
        assert isinstance(base, ir.SBool)
        b = base.expr
        # goto b[->m:n] = (!b[*0:$] ##1 b)[*m:n]; non-consecutive adds a trailing !b[*0:$].
        notb = ir.SBool(ir.Unary("lnot", b, 1))
        one = ir.SDelay(ir.SRepeat(notb, 0, None), 1, 1, base)
        goto = ir.SRepeat(one, lo, hi)
        if kind == "GoTo":
            return goto
        if kind == "Nonconsecutive":
            return ir.SDelay(goto, 1, 1, ir.SRepeat(notb, 0, None))
        raise SvaError("unsupported", f"repetition kind {kind}")
    if k == A.SequenceConcat:
        cur: ir.Seq | None = None
        for el in e.elements:
            lo, hi = _range(el.delay)
            item = _seq(el.sequence, ctx)
            if cur is None:
                cur = item if (lo, hi) == (0, 0) else ir.SDelay(None, lo, hi, item)
            else:
                cur = ir.SDelay(cur, lo, hi, item)
        if cur is None:
            raise SvaError("syntax", "empty sequence")
        return cur
    if k == A.FirstMatch:
        if len(e.matchItems):
            raise SvaError("unsupported", "first_match with match items")
        return ir.SFirst(_seq(e.seq, ctx))
    if k == A.Binary:
        left, right = e.left, e.right
        if e.op == B.Throughout:
            # b throughout s = b[*0:$] intersect s (IEEE 1800 16.9.9)
            cond = _seq(left, ctx)
            return ir.SBin("intersect", ir.SRepeat(cond, 0, None), _seq(right, ctx))
        if e.op == B.Within:
            # s1 within s2 = (1[*0:$] ##1 s1 ##1 1[*0:$]) intersect s2 (16.9.10)
            anyc = ir.SRepeat(ir.SBool(ir.Const(1, 1)), 0, None)
            inner = ir.SDelay(ir.SDelay(anyc, 1, 1, _seq(left, ctx)), 1, 1, anyc)
            return ir.SBin("intersect", inner, _seq(right, ctx))
        ops = {B.And: "and", B.Or: "or", B.Intersect: "intersect"}
        if e.op in ops:
            return ir.SBin(ops[e.op], _seq(left, ctx), _seq(right, ctx))  # type: ignore[arg-type]
    raise SvaError("unsupported", f"sequence construct {k.name}")


def _prop(e: Any, ctx: _Ctx) -> ir.Prop:
    if _is_seq(e):
        return ir.PSeq(_seq(e, ctx), "unmarked")
    k = e.kind
    if k == A.StrongWeak:
        strength = "strong" if e.strength == ast.StrongWeakAssertionExpr.Strength.Strong else "weak"
        return ir.PSeq(_seq(e.expr, ctx), strength)  # type: ignore[arg-type]
    if k == A.Unary:
        return _unary(e, ctx)
    if k == A.Binary:
        op = e.op
        if op in (B.OverlappedImplication, B.NonOverlappedImplication):
            return ir.PImpl(_seq(e.left, ctx), _prop(e.right, ctx), op == B.OverlappedImplication)
        if op in (B.OverlappedFollowedBy, B.NonOverlappedFollowedBy):
            return ir.PImpl(
                _seq(e.left, ctx), _prop(e.right, ctx), op == B.OverlappedFollowedBy, True
            )
        simple = {B.And: "and", B.Or: "or", B.Implies: "implies", B.Iff: "iff"}
        if op in simple:
            return ir.PBin(simple[op], _prop(e.left, ctx), _prop(e.right, ctx))  # type: ignore[arg-type]
        untils = {
            B.Until: (False, False),
            B.SUntil: (True, False),
            B.UntilWith: (False, True),
            B.SUntilWith: (True, True),
        }
        if op in untils:
            strong, incl = untils[op]
            return ir.PUntil(_prop(e.left, ctx), _prop(e.right, ctx), strong, incl)
        raise SvaError("unsupported", f"property operator {op.name}")
    if k == A.Conditional:
        cond = _expr(e.condition, ctx)
        other = None if e.elseExpr is None else _prop(e.elseExpr, ctx)
        return ir.PIf(cond, _prop(e.ifExpr, ctx), other)
    if k == A.Clocking:
        raise SvaError("unsupported", "multiple or nested clocks")
    if k == A.DisableIff:
        raise SvaError("unsupported", "nested disable iff")
    if k == A.Abort:
        raise SvaError("unsupported", "accept_on/reject_on")
    if k == A.Case:
        raise SvaError("unsupported", "case properties")
    raise SvaError("unsupported", f"property construct {k.name}")


def _unary(e: Any, ctx: _Ctx) -> ir.Prop:
    op = e.op
    inner = _prop(e.expr, ctx)
    rng = e.range
    if op == U.Not:
        return ir.PNot(inner)
    if op in (U.NextTime, U.SNextTime):
        n = 1 if rng is None else _bound(rng.min)
        return ir.PNext(inner, n)
    lo, hi = (0, None) if rng is None else _range(rng)
    if op in (U.Always, U.SAlways):
        return ir.PAlways(inner, lo, hi)
    if op in (U.Eventually, U.SEventually):
        return ir.PEventually(inner, lo, hi)
    raise SvaError("unsupported", f"unary property operator {op.name}")


# ---------------------------------------------------------------------------------------------
# Expressions.

_BIN = {
    "Add": "add",
    "Subtract": "sub",
    "Multiply": "mul",
    "Divide": "div",
    "Mod": "mod",
    "BinaryAnd": "and",
    "BinaryOr": "or",
    "BinaryXor": "xor",
    "BinaryXnor": "xnor",
    "Equality": "eq",
    "Inequality": "ne",
    "CaseEquality": "eq",  # 2-state: === is ==
    "CaseInequality": "ne",
    "WildcardEquality": "eq",  # no X/Z bits in 2-state constants
    "WildcardInequality": "ne",
    "GreaterThanEqual": "ge",
    "GreaterThan": "gt",
    "LessThanEqual": "le",
    "LessThan": "lt",
    "LogicalAnd": "land",
    "LogicalOr": "lor",
    "LogicalImplication": "limp",
    "LogicalEquivalence": "leqv",
    "LogicalShiftLeft": "shl",
    "LogicalShiftRight": "lshr",
    "ArithmeticShiftLeft": "shl",
    "ArithmeticShiftRight": "ashr",
    "Power": "pow",
}
_UN = {
    "Plus": None,
    "Minus": "neg",
    "BitwiseNot": "not",
    "BitwiseAnd": "red_and",
    "BitwiseOr": "red_or",
    "BitwiseXor": "red_xor",
    "BitwiseNand": "red_nand",
    "BitwiseNor": "red_nor",
    "BitwiseXnor": "red_xnor",
    "LogicalNot": "lnot",
}


def _type(e: Any) -> tuple[int, bool]:
    t = e.type
    if not t.isIntegral:
        raise SvaError("unsupported", f"non-integral expression of type {t}")
    w = int(t.bitWidth)
    if not 1 <= w <= MAX_WIDTH:
        raise SvaError("unsupported", f"expression of width {w}")
    return w, bool(t.isSigned)


def _const_value(cv: Any, width: int) -> int:
    return _svint(cv.value, width)


def _svint(v: Any, width: int) -> int:
    try:
        if v.hasUnknown:
            v = v.flattenUnknowns()
        n = int(v)
    except (TypeError, ValueError, AttributeError) as exc:
        raise SvaError("unsupported", f"constant {v}") from exc
    return n & ((1 << width) - 1)


def _const_int(e: Any, what: str) -> int:
    cv = e.constant
    if cv is None and e.kind == E.NamedValue and e.symbol.kind == ast.SymbolKind.Parameter:
        cv = e.symbol.value
    if cv is None:
        raise SvaError("unsupported", f"{what} must be a constant")
    try:
        return int(cv.value)
    except (TypeError, ValueError, AttributeError) as exc:
        raise SvaError("unsupported", f"{what} must be an integer constant") from exc


def _expr(e: Any, ctx: _Ctx) -> ir.Expr:
    w, s = _type(e)
    k = e.kind
    if k == E.NamedValue:
        sym = e.symbol
        name = str(sym.name)
        if ctx.in_property_body and ctx.allowed is not None and name not in ctx.allowed:
            raise SvaError("signal", f"signal {name!r} is not in the allowed list")
        if sym.kind == ast.SymbolKind.Parameter:
            cv = e.constant if e.constant is not None else sym.value
            return ir.Const(_const_value(cv, w), w, s)
        if sym.kind not in (ast.SymbolKind.Net, ast.SymbolKind.Variable, ast.SymbolKind.Port):
            raise SvaError("unsupported", f"reference to {sym.kind.name} {name}")
        sig = ir.Sig(name, w, s)
        ctx.signals[name] = Signal(name, w, s)
        return sig
    if k == E.HierarchicalValue:
        raise SvaError("unsupported", "hierarchical references")
    cv = e.constant
    if cv is None and k == E.IntegerLiteral:
        cv = e.value
        return ir.Const(_svint(cv, w), w, s)
    if cv is not None:
        return ir.Const(_const_value(cv, w), w, s)
    if k == E.UnbasedUnsizedIntegerLiteral:
        return ir.Const(_unbased(e, w), w, s)
    if k == E.Conversion:
        inner = _expr(e.operand, ctx)
        return ir.Resize(inner, w, s)
    if k == E.UnaryOp:
        op = _UN.get(e.op.name, "?")
        arg = _expr(e.operand, ctx)
        if op is None:
            return arg
        if op == "?":
            raise SvaError("unsupported", f"operator {e.op.name}")
        return ir.Unary(op, arg, w, s)
    if k == E.BinaryOp:
        opname = _BIN.get(e.op.name)
        if opname is None:
            raise SvaError("unsupported", f"operator {e.op.name}")
        left = _expr(e.left, ctx)
        if opname == "pow":
            exp = _const_int(e.right, "an exponent")
            if not 0 <= exp <= 64:
                raise SvaError("unsupported", "exponent out of range")
            result: ir.Expr = ir.Const(1, w, s)
            for _ in range(exp):
                result = ir.Binary("mul", result, left, w, s)
            return result
        return ir.Binary(opname, left, _expr(e.right, ctx), w, s)
    if k == E.ConditionalOp:
        conds = list(e.conditions)
        if len(conds) != 1 or conds[0].pattern is not None:
            raise SvaError("unsupported", "conditional with patterns")
        return ir.Cond(_expr(conds[0].expr, ctx), _expr(e.left, ctx), _expr(e.right, ctx), w, s)
    if k == E.Concatenation:
        parts = tuple(_expr(p, ctx) for p in e.operands if p.type.bitWidth > 0)
        return ir.Concat(parts, w, s)
    if k == E.Replication:
        n = _const_int(e.count, "a replication count")
        inner = _expr(e.concat, ctx)
        return ir.Concat((inner,) * n, w, s)
    if k == E.ElementSelect:
        return _element_select(e, w, s, ctx)
    if k == E.RangeSelect:
        return _range_select(e, w, s, ctx)
    if k == E.Call:
        return _call(e, w, s, ctx)
    if k == E.Inside:
        return _inside(e, ctx)
    raise SvaError("unsupported", f"expression kind {k.name}")


def _unbased(e: Any, w: int) -> int:
    text = str(e.value)
    return (1 << w) - 1 if text.endswith("1") else 0


def _bit_offset(rng: Any, index: int) -> int:
    left, right = int(rng.left), int(rng.right)
    return index - right if left >= right else right - index


def _element_select(e: Any, w: int, s: bool, ctx: _Ctx) -> ir.Expr:
    vt = e.value.type
    if (
        vt.hasFixedRange
        and not vt.isIntegral
        and e.value.kind == E.NamedValue
        and e.value.symbol.kind in (ast.SymbolKind.Net, ast.SymbolKind.Variable)
    ):
        # An element of an unpacked array with a constant index: a free signal of its own.
        if e.selector.constant is None:
            raise SvaError("unsupported", "dynamic index into an unpacked array")
        name = str(e.value.symbol.name)
        if ctx.in_property_body and ctx.allowed is not None and name not in ctx.allowed:
            raise SvaError("signal", f"signal {name!r} is not in the allowed list")
        elem = f"{name}[{_const_int(e.selector, 'index')}]"
        ctx.signals[elem] = Signal(elem, w, s)
        return ir.Sig(elem, w, s)
    if not vt.hasFixedRange or not vt.isIntegral:
        raise SvaError("unsupported", "selects of unpacked arrays or dynamic types")
    base = _expr(e.value, ctx)
    rng = vt.fixedRange
    if e.selector.constant is not None:
        off = _bit_offset(rng, _const_int(e.selector, "index")) * w
        return ir.Extract(base, off, w, s)
    index = _expr(e.selector, ctx)
    left, right = int(rng.left), int(rng.right)
    if left >= right:
        return ir.DynExtract(base, index, -right * w, w, w, s)
    return ir.DynExtract(base, index, right * w, -w, w, s)


def _range_select(e: Any, w: int, s: bool, ctx: _Ctx) -> ir.Expr:
    vt = e.value.type
    if not vt.hasFixedRange or not vt.isIntegral:
        raise SvaError("unsupported", "selects of unpacked arrays or dynamic types")
    base = _expr(e.value, ctx)
    rng = vt.fixedRange
    elem = int(vt.bitWidth) // max(1, int(rng.width))
    kind = e.selectionKind.name
    if kind == "Simple":
        a = _const_int(e.left, "select bound")
        b = _const_int(e.right, "select bound")
        lo_idx = min(_bit_offset(rng, a), _bit_offset(rng, b))
        return ir.Extract(base, lo_idx * elem, w, s)
    count = w // max(1, elem)
    if e.left.constant is not None or (
        e.left.kind == E.NamedValue and e.left.symbol.kind == ast.SymbolKind.Parameter
    ):
        start = _const_int(e.left, "select start")
        up = kind == "IndexedUp"
        ends = (start, start + count - 1) if up else (start - count + 1, start)
        lo_idx = min(_bit_offset(rng, ends[0]), _bit_offset(rng, ends[1]))
        return ir.Extract(base, lo_idx * elem, w, s)
    index = _expr(e.left, ctx)
    left, right = int(rng.left), int(rng.right)
    descending = left >= right
    # Lowest bit of the slice as a linear function of the start index.
    if descending:
        shift = 0 if kind == "IndexedUp" else -(count - 1)
        return ir.DynExtract(base, index, (shift - right) * elem, elem, w, s)
    shift = count - 1 if kind == "IndexedUp" else 0
    return ir.DynExtract(base, index, (right - shift) * elem, -elem, w, s)


def _call(e: Any, w: int, s: bool, ctx: _Ctx) -> ir.Expr:
    if not e.isSystemCall:
        raise SvaError("unsupported", f"call of user function {e.subroutineName}")
    name = str(e.subroutineName)
    args = list(e.arguments)
    present = [a for a in args if a.kind != E.EmptyArgument]

    def one() -> ir.Expr:
        if len(present) != 1 or len(args) != 1:
            raise SvaError("unsupported", f"{name} with a clocking or extra argument")
        return _expr(args[0], ctx)

    def lsb(x: ir.Expr) -> ir.Expr:
        return ir.Extract(x, 0, 1)

    if name == "$past":
        if not args:
            raise SvaError("syntax", "$past needs an argument")
        n = 1
        if len(args) >= 2 and args[1].kind != E.EmptyArgument:
            n = _const_int(args[1], "the $past delay")
        if any(a.kind != E.EmptyArgument for a in args[2:]):
            raise SvaError("unsupported", "$past with a gating expression or clock")
        if not 1 <= n <= MAX_DELAY:
            raise SvaError("unsupported", f"$past delay {n}")
        return ir.Past(_expr(args[0], ctx), n, w, s)
    if name in ("$rose", "$fell"):
        x = one()
        now, before = lsb(x), lsb(ir.Past(x, 1, _w(x), False))
        if name == "$rose":
            return ir.Binary("land", now, ir.Unary("lnot", before, 1), 1)
        return ir.Binary("land", ir.Unary("lnot", now, 1), before, 1)
    if name in ("$stable", "$changed"):
        x = one()
        eq = "eq" if name == "$stable" else "ne"
        return ir.Binary(eq, x, ir.Past(x, 1, _w(x), False), 1)
    if name in ("$onehot", "$onehot0", "$countones"):
        x = one()
        cw = max(1, _w(x).bit_length() + 1)
        pop = ir.Unary("popcount", x, cw)
        if name == "$countones":
            return ir.Resize(pop, w, s)
        return ir.Binary("eq" if name == "$onehot" else "le", pop, ir.Const(1, cw), 1)
    if name == "$sampled":
        return one()
    if name == "$isunknown":
        one()
        return ir.Const(0, w)  # 2-state traces have no X or Z
    if name in ("$signed", "$unsigned"):
        return ir.Resize(one(), w, s)
    raise SvaError("unsupported", f"system function {name}")


def _w(x: ir.Expr) -> int:
    return x.width


def _inside(e: Any, ctx: _Ctx) -> ir.Expr:
    left = _expr(e.left, ctx)
    terms: list[ir.Expr] = []
    for item in e.rangeList:
        if item.kind == E.ValueRange:
            lo_e, hi_e = _expr(item.left, ctx), _expr(item.right, ctx)
            terms.append(
                ir.Binary(
                    "land",
                    ir.Binary("ge", left, _fit(lo_e, left), 1),
                    ir.Binary("le", left, _fit(hi_e, left), 1),
                    1,
                )
            )
        else:
            terms.append(ir.Binary("eq", left, _fit(_expr(item, ctx), left), 1))
    if not terms:
        return ir.Const(0, 1)
    out = terms[0]
    for t in terms[1:]:
        out = ir.Binary("lor", out, t, 1)
    return out


def _fit(x: ir.Expr, like: ir.Expr) -> ir.Expr:
    return x if x.width == like.width else ir.Resize(x, like.width, like.signed)
