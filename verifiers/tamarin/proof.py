"""Proof trees and their ``.spthy`` script form (reference §4: Tamarin's proof grammar).

A proof is a tree: every node holds the proof method applied there and the named cases the
method split the node into. Tamarin prints it as::

    simplify                                   a method with one unnamed case: the child follows
    solve( Client_1( S, k ) ▶₀ #i )            a method with named cases:
      case Client_1                              each case indented by two,
      by contradiction /* from formulas */       a closed leaf is ``by METHOD``,
    next                                         cases separated by ``next``,
      case Other
      by sorry                                   an open leaf is ``by sorry``
    qed                                          and closed by ``qed``

``SOLVED // trace found`` is a leaf where a trace was found. Everything here is iterative, so a
hostile script cannot exhaust the interpreter's stack; scripts are bounded in size and depth.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_PROOF_CHARS = 1024 * 1024
"""Longest proof script accepted (far beyond any proof a model writes in one response)."""
MAX_DEPTH = 2000
"""Deepest nesting of methods accepted; real proofs stay in the hundreds."""
MAX_GOAL_CHARS = 4096
"""Longest ``solve( … )`` goal accepted."""

SOLVED = "SOLVED"
"""The method text of a leaf where a trace was found."""
_TRACE_FOUND = "SOLVED // trace found"
_METHOD_WORDS = frozenset(
    {"sorry", "simplify", "contradiction", "induction", "INVALIDATED", "UNFINISHABLE", "solve"}
)
# Methods that leave the node without a proof: an open goal (``sorry``, also Tamarin's
# ``sorry /* invalid proof step encountered */``), an invalidated or an unfinishable branch.
_OPEN_WORDS = frozenset({"sorry", "INVALIDATED", "UNFINISHABLE"})
_CASE_NAME = re.compile(r"[A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One-line block comment after a method (``/* from formulas */``, ``/* unannotated */``): kept
# as part of the method text, as Tamarin prints it.
_TRAILING_COMMENT = re.compile(r"[ \t]*(/\*[^\n]*?\*/)")


class ProofSyntaxError(ValueError):
    """A proof script does not follow Tamarin's proof grammar; ``line`` is 1-based (0 when the
    whole script is refused)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.message = message
        self.line = line


@dataclass(frozen=True, eq=False, repr=False)
class ProofTree:
    """One node of a proof: the method applied (None: open, rendered ``by sorry``) and the
    ``(case name, subtree)`` pairs it produced, in Tamarin's order (``""``: unnamed case).

    Equality, hashing and ``repr`` are iterative: deep trees never recurse.
    """

    method: str | None
    cases: tuple[tuple[str, ProofTree], ...] = ()

    def __post_init__(self) -> None:
        if self.method == "sorry":  # one spelling of an open node
            object.__setattr__(self, "method", None)

    def nodes(self) -> Iterator[ProofTree]:
        """Every node, depth-first in script order (the root first)."""
        stack: list[ProofTree] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(child for _, child in reversed(node.cases))

    @property
    def is_open(self) -> bool:
        """This node carries no proof: ``sorry`` (with or without a comment), ``INVALIDATED``
        or ``UNFINISHABLE``."""
        return self.method is None or self.method.split(maxsplit=1)[0] in _OPEN_WORDS

    @property
    def size(self) -> int:
        """Applied proof methods: every node but open ones and ``SOLVED`` leaves (a status,
        not a method). The greedy Tutorial proofs have sizes 5, 11 and 15."""
        return sum(1 for node in self.nodes() if not node.is_open and node.method != SOLVED)

    @property
    def is_complete(self) -> bool:
        """No open node anywhere: every branch ends in a closing method or ``SOLVED``."""
        return not any(node.is_open for node in self.nodes())

    @property
    def found_trace(self) -> bool:
        """Some branch ends in ``SOLVED`` (a trace: a witness or an attack), which decides the
        lemma whatever the other branches hold."""
        return any(node.method == SOLVED and not node.cases for node in self.nodes())

    @property
    def depth(self) -> int:
        """Nesting depth: 1 for a leaf."""
        deepest, stack = 0, [(self, 1)]
        while stack:
            node, level = stack.pop()
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for _, child in node.cases)
        return deepest

    def _preorder(self) -> Iterator[tuple[str | None, str, int]]:
        # (method, case name, number of cases) in preorder determines the tree.
        stack: list[tuple[str, ProofTree]] = [("", self)]
        while stack:
            name, node = stack.pop()
            yield node.method, name, len(node.cases)
            stack.extend(reversed(node.cases))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProofTree):
            return NotImplemented
        pending: list[tuple[ProofTree, ProofTree]] = [(self, other)]
        while pending:
            a, b = pending.pop()
            if a is b:
                continue
            if a.method != b.method or len(a.cases) != len(b.cases):
                return False
            for (name_a, child_a), (name_b, child_b) in zip(a.cases, b.cases, strict=True):
                if name_a != name_b:
                    return False
                pending.append((child_a, child_b))
        return True

    def __hash__(self) -> int:
        return hash(tuple(self._preorder()))

    def __repr__(self) -> str:
        return f"parse_proof({render_proof(self)!r})"


def render_proof(tree: ProofTree) -> str:
    """The proof as Tamarin prints it (no trailing newline): ``by METHOD`` leaves,
    ``SOLVED // trace found``, a lone unnamed case continuing at the same indent, otherwise
    ``case``/``next``/``qed`` with two-space indentation."""
    lines: list[str] = []
    stack: list[tuple[ProofTree, int] | str] = [(tree, 0)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            lines.append(item)
            continue
        node, indent = item
        pad = " " * indent
        text = node.method if node.method is not None else "sorry"
        if "\n" in text:  # a goal over several lines: continuation lines follow the indent
            text = text.replace("\n", "\n" + pad)
        if not node.cases:
            lines.append(pad + (_TRACE_FOUND if text == SOLVED else f"by {text}"))
            continue
        lines.append(pad + text)
        if len(node.cases) == 1 and node.cases[0][0] == "":
            stack.append((node.cases[0][1], indent))
            continue
        items: list[tuple[ProofTree, int] | str] = []
        for number, (name, child) in enumerate(node.cases):
            if number:
                items.append(pad + "next")
            items.append(f"{pad}  case {name}".rstrip())
            items.append((child, indent + 2))
        items.append(pad + "qed")
        stack.extend(reversed(items))
    return "\n".join(lines)


@dataclass(frozen=True)
class _Token:
    kind: str  # "by", "case", "next", "qed", "method", "end"
    text: str  # the method text, or the case name
    line: int
    end: int  # offset just after the token (and its kept comment)


class _Scanner:
    """Tokens of a proof script from ``start``, with one token of lookahead."""

    def __init__(self, text: str, start: int, line: int) -> None:
        self.text = text
        self.pos = start
        self.line = line
        self._peeked: _Token | None = None

    def peek(self) -> _Token:
        if self._peeked is None:
            self._peeked = self._scan()
        return self._peeked

    def next(self) -> _Token:
        token = self.peek()
        self._peeked = None
        return token

    def _skip(self) -> None:
        """Whitespace and comments (Tamarin's lexer treats both as blanks)."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            char = text[self.pos]
            if char == "\n":
                self.line += 1
                self.pos += 1
            elif char.isspace():
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise ProofSyntaxError("unterminated /* comment", self.line)
                self.line += text.count("\n", self.pos, end)
                self.pos = end + 2
            else:
                return

    def _scan(self) -> _Token:
        self._skip()
        text, line, start = self.text, self.line, self.pos
        if start >= len(text):
            return _Token("end", "", line, start)
        word = _WORD.match(text, start)
        if word is None:
            raise ProofSyntaxError(f"unexpected {text[start : start + 20]!r}", line)
        self.pos = word.end()
        name = word[0]
        if name in ("by", "next", "qed"):
            return _Token(name, name, line, self.pos)
        if name == "case":
            while self.pos < len(text) and text[self.pos] in " \t":
                self.pos += 1
            # The case name sits on the ``case`` line; a bare ``case`` is the unnamed case.
            label = _CASE_NAME.match(text, self.pos)
            assert label is not None  # the pattern matches the empty string
            self.pos = label.end()
            return _Token("case", label[0], line, self.pos)
        if name == SOLVED:
            return _Token("method", SOLVED, line, self.pos)
        if name not in _METHOD_WORDS:
            raise ProofSyntaxError(f"unknown proof step {name!r}", line)
        method = name
        if name == "solve":
            method = self._goal(start)
        comment = _TRAILING_COMMENT.match(text, self.pos)
        if comment is not None and "/*" not in comment[1][2:-2]:
            method += " " + comment[1]
            self.pos = comment.end()
        return _Token("method", method, line, self.pos)

    def _goal(self, start: int) -> str:
        """``solve( GOAL )`` from ``start``, with balanced parentheses. Tamarin breaks long
        goals over lines; continuation lines are kept relative to the indentation of the line
        the method starts on, so the text renders at any depth. Quotes and comment markers
        are refused inside: they would change how Tamarin reads the rest of the theory."""
        text, line = self.text, self.line
        while self.pos < len(text) and text[self.pos] in " \t":
            self.pos += 1
        if not text.startswith("(", self.pos):
            raise ProofSyntaxError("'solve' must be followed by '( GOAL )'", line)
        depth, i, limit = 0, self.pos, min(len(text), self.pos + MAX_GOAL_CHARS)
        while i < limit:
            char = text[i]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    break
            elif char == '"' or text.startswith(("/*", "*/", "//"), i):
                raise ProofSyntaxError(
                    "a solve( … ) goal may not contain quotes or comments", self.line
                )
            elif char == "\n":
                self.line += 1
            i += 1
        else:
            raise ProofSyntaxError("unbalanced parentheses in solve( … )", line)
        self.pos = i + 1
        raw = text[start : self.pos]
        if "\n" not in raw:
            return raw
        line_start = text.rfind("\n", 0, start) + 1
        indent = len(text[line_start:start]) - len(text[line_start:start].lstrip(" "))
        first, *rest = raw.split("\n")
        return "\n".join([first.rstrip(), *(_dedent(part, indent).rstrip() for part in rest)])


def _dedent(line: str, indent: int) -> str:
    """``line`` without up to ``indent`` leading spaces."""
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent) :]


def _describe(token: _Token) -> str:
    if token.kind == "end":
        return "the end of the script"
    if token.kind == "case":
        return f"'case {token.text}'" if token.text else "'case'"
    return repr(token.text)


@dataclass
class _Frame:
    method: str
    line: int
    named: bool  # cases with ``case``/``next``/``qed``; else one unnamed case follows
    name: str = ""
    cases: list[tuple[str, ProofTree]] = field(default_factory=list)


def _step(scanner: _Scanner, stack: list[_Frame]) -> tuple[ProofTree, int] | None:
    """Read one proof step: a finished leaf with its end offset, or None when a method opened
    a new frame on ``stack``."""
    token = scanner.next()
    if token.kind == "by":
        method = scanner.next()
        if method.kind != "method":
            raise ProofSyntaxError(
                f"'by' needs a proof method, found {_describe(method)}", method.line
            )
        return ProofTree(method.text), method.end
    if token.kind == "method" and token.text == SOLVED:
        return ProofTree(SOLVED), token.end
    if token.kind == "method":
        if len(stack) >= MAX_DEPTH:
            raise ProofSyntaxError(f"the proof nests deeper than {MAX_DEPTH} steps", token.line)
        if scanner.peek().kind == "case":
            stack.append(_Frame(token.text, token.line, True, scanner.next().text))
        else:
            stack.append(_Frame(token.text, token.line, False))
        return None
    if token.kind == "end" and not stack:
        raise ProofSyntaxError("the proof is empty (only blanks and comments)", token.line)
    where = f" after {stack[-1].method!r} (line {stack[-1].line})" if stack else ""
    raise ProofSyntaxError(
        f"expected a proof step (by METHOD, SOLVED or a method){where}, found {_describe(token)}",
        token.line,
    )


def _finish(
    scanner: _Scanner, stack: list[_Frame], tree: ProofTree, end: int
) -> tuple[ProofTree, int] | None:
    """Hand a finished subtree to the frames it completes: the whole proof with its end
    offset once the stack empties, or None when a ``next case`` asks for another subtree."""
    while stack:
        frame = stack[-1]
        if not frame.named:
            stack.pop()
            tree = ProofTree(frame.method, (("", tree),))
            continue
        frame.cases.append((frame.name, tree))
        token = scanner.next()
        if token.kind == "next":
            case = scanner.next()
            if case.kind != "case":
                raise ProofSyntaxError(
                    f"'next' must be followed by 'case NAME', found {_describe(case)}", case.line
                )
            frame.name = case.text
            return None
        if token.kind != "qed":
            raise ProofSyntaxError(
                f"expected 'next' or 'qed' in the cases of {frame.method!r} "
                f"(line {frame.line}), found {_describe(token)}",
                token.line,
            )
        stack.pop()
        tree, end = ProofTree(frame.method, tuple(frame.cases)), token.end
    return tree, end


def parse_proof_at(text: str, start: int = 0, line: int = 1) -> tuple[ProofTree, int]:
    """Parse one proof beginning at offset ``start`` of ``text`` (whose line number there is
    ``line``); returns the tree and the offset just after it. Text after the proof is left
    alone, which is how a proof is found inside a theory.

    Raises ProofSyntaxError.
    """
    scanner = _Scanner(text, start, line)
    stack: list[_Frame] = []
    while True:  # an explicit stack, not recursion: nesting depth costs no interpreter stack
        leaf = _step(scanner, stack)
        if leaf is not None:
            done = _finish(scanner, stack, *leaf)
            if done is not None:
                return done


def parse_proof(text: str) -> ProofTree:
    """Parse a whole proof script: Tamarin's grammar (§4) with ``/* … */`` and ``// …``
    comments; nothing but comments may follow the proof.

    Raises ProofSyntaxError (with the line number) on anything else, on scripts over
    ``MAX_PROOF_CHARS`` and on nesting over ``MAX_DEPTH``.
    """
    if len(text) > MAX_PROOF_CHARS:
        raise ProofSyntaxError(f"the proof is longer than {MAX_PROOF_CHARS // 1024} KiB")
    if not text.strip():
        raise ProofSyntaxError("the proof is empty")
    tree, end = parse_proof_at(text)
    rest = _Scanner(text, end, 1 + text.count("\n", 0, end))
    extra = rest.next()
    if extra.kind != "end":
        raise ProofSyntaxError(
            f"unexpected {_describe(extra)} after the end of the proof", extra.line
        )
    return tree
