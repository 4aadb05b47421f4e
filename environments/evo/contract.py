"""The environment-as-code contract, read statically from a submission's source.

A submission is one Python module (standard library only) with four literal metadata
constants and four functions; ``README.md`` has a complete example:

``NAME``           lowercase identifier, served as ``evo/<NAME>``
``DESCRIPTION``    one sentence for the catalogue
``DIFFICULTIES``   the difficulty levels, a list of distinct ints (the first is the default)
``ANSWER_FORMAT``  what the response must end with; answers go inside ``<answer>…</answer>``
``generate(seed, difficulty) -> instance``  a JSON value, a pure function of its arguments
``prompt(instance) -> str``                  the self-contained task text, stating the format
``reference(instance) -> str``               a complete response that scores 1 (the oracle)
``score(instance, response) -> float|None``  in [0, 1]; None when no answer can be read
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

MAX_SOURCE_CHARS = 64_000
FUNCTIONS = {"generate": 2, "prompt": 1, "reference": 1, "score": 2}
ALLOWED_IMPORTS = frozenset(
    {"bisect", "collections", "dataclasses", "fractions", "functools", "heapq", "itertools",
     "json", "math", "operator", "random", "re", "statistics", "string", "typing"}
)  # fmt: skip
"""Pure computation only: nothing that reaches files, processes, the network or the runtime."""
BANNED_NAMES = frozenset(
    {"__import__", "breakpoint", "compile", "delattr", "dir", "eval", "exec", "getattr",
     "globals", "input", "locals", "memoryview", "open", "setattr", "vars", "__builtins__"}
)  # fmt: skip
NAME_PATTERN = re.compile(r"[a-z][a-z0-9_]{1,47}")


class ContractError(ValueError):
    """The source breaks the contract statically; the message says where and why."""


@dataclass(frozen=True)
class Metadata:
    """The literal metadata of a submission."""

    name: str
    description: str
    difficulties: tuple[int, ...]
    answer_format: str


def _literal(tree: ast.Module, name: str) -> object:
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                raise ContractError(f"{name} must be a literal") from None
    raise ContractError(f"{name} is missing")


def _metadata(tree: ast.Module) -> Metadata:
    name, description = _literal(tree, "NAME"), _literal(tree, "DESCRIPTION")
    difficulties, answer_format = _literal(tree, "DIFFICULTIES"), _literal(tree, "ANSWER_FORMAT")
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ContractError("NAME must match [a-z][a-z0-9_]{1,47}")
    if name == "construct":
        raise ContractError("NAME 'construct' is the construction environment's own")
    if not isinstance(description, str) or not 10 <= len(description) <= 500:
        raise ContractError("DESCRIPTION must be a sentence of 10 to 500 characters")
    if (
        not isinstance(difficulties, list | tuple)
        or not 2 <= len(difficulties) <= 10
        or not all(isinstance(d, int) and not isinstance(d, bool) for d in difficulties)
        or len(set(difficulties)) != len(difficulties)
    ):
        raise ContractError("DIFFICULTIES must list 2 to 10 distinct ints")
    if not isinstance(answer_format, str) or "<answer>" not in answer_format:
        raise ContractError("ANSWER_FORMAT must be a string showing the <answer>...</answer> tags")
    return Metadata(name, description, tuple(difficulties), answer_format)


def _forbidden(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import | ast.ImportFrom):
        modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        relative = isinstance(node, ast.ImportFrom) and node.level > 0
        for module in modules:
            if (module or "").split(".")[0] not in ALLOWED_IMPORTS or relative:
                return f"imports {module!r}; allowed: {', '.join(sorted(ALLOWED_IMPORTS))}"
    if isinstance(node, ast.Name) and node.id in BANNED_NAMES:
        return f"uses {node.id}"
    if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
        return f"reaches the dunder attribute {node.attr}"
    if isinstance(node, ast.Global | ast.Nonlocal):
        return "declares global or nonlocal state"
    return None


def check_source(source: str) -> Metadata:
    """The metadata of ``source``; raises ``ContractError`` when it is too large, does not
    parse, imports beyond the allow-list, reaches for the runtime (eval, open, dunder
    attributes, global state) or lacks a member."""
    if len(source) > MAX_SOURCE_CHARS:
        raise ContractError(f"the source is over {MAX_SOURCE_CHARS} characters")
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ContractError(f"the source does not parse: {exc}") from None
    for node in ast.walk(tree):
        why = _forbidden(node)
        if why is not None:
            raise ContractError(f"line {getattr(node, 'lineno', '?')}: {why}")
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for name, arity in FUNCTIONS.items():
        function = functions.get(name)
        if function is None:
            raise ContractError(f"function {name} is missing")
        if len(function.args.args) != arity or function.args.vararg or function.args.kwarg:
            raise ContractError(f"{name} must take exactly {arity} positional arguments")
    return _metadata(tree)


class _Canonical(ast.NodeTransformer):
    """Identifiers renamed by first appearance, docstrings and metadata strings dropped: two
    sources that differ only in names, comments, layout or wording normalise alike."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _rename(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(self._rename(node.id), node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.copy_location(ast.arg(self._rename(node.arg)), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name not in FUNCTIONS:
            node.name = self._rename(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST | None:
        if node.value is None:
            return None
        assign = ast.copy_location(ast.Assign([node.target], node.value), node)
        return self.visit_Assign(assign)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        return None if isinstance(node.value, ast.Constant) else self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        # Prompt wording is not behaviour: strings collapse, numbers stay.
        return ast.Constant("") if isinstance(node.value, str) else node


def code_digest(source: str) -> str:
    """SHA-256 of ``source`` exactly as submitted: the store's content address."""
    return hashlib.sha256(source.encode()).hexdigest()


def normalised_digest(source: str) -> str:
    """SHA-256 of the canonical form of ``source`` (see ``_Canonical``): the code half of the
    novelty check. Call only on source ``check_source`` accepted."""
    tree = ast.parse(source)
    tree.body = [
        node
        for node in tree.body
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in ("NAME", "DESCRIPTION", "ANSWER_FORMAT"))
    ]  # fmt: skip
    canonical = ast.fix_missing_locations(_Canonical().visit(tree))
    return hashlib.sha256(ast.dump(canonical).encode()).hexdigest()
