"""Everything a value type decides: signatures, the text on standard input and output, and the
reference programs assembled around a kind's function body.

The encodings here are the I/O contract the prompt states. The trusted side writes test inputs
and expected outputs with ``to_stdin``/``to_stdout``; the reference programs read and write the
same text with generated code, and the tests check the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from environments.code.problem import Param, Problem, ValueType

PYTHON_TYPES: Mapping[ValueType, str] = {
    "int": "int",
    "bool": "bool",
    "str": "str",
    "ints": "list[int]",
    "strs": "list[str]",
    "matrix": "list[list[int]]",
    "groups": "list[list[str]]",
}

CPP_TYPES: Mapping[ValueType, str] = {
    "int": "long long",
    "bool": "bool",
    "str": "string",
    "ints": "vector<long long>",
    "strs": "vector<string>",
    "matrix": "vector<vector<long long>>",
    "groups": "vector<vector<string>>",
}

# How each parameter type appears on standard input (one entry per line it occupies).
INPUT_FORMATS: Mapping[ValueType, str] = {
    "int": "a line with the integer `{name}`",
    "str": "a line with the string `{name}` (possibly empty, spaces included)",
    "ints": "a line with the length of `{name}`, then a line with its elements separated by "
    "single spaces (an empty line when it is empty)",
    "strs": "a line with the number of words in `{name}`, then a line with the words separated "
    "by single spaces (an empty line when there are none)",
    "matrix": "a line with the number of rows and of columns of `{name}`, separated by a space, "
    "then one line per row with its values separated by single spaces",
}

OUTPUT_FORMATS: Mapping[ValueType, str] = {
    "int": "a single line with the integer",
    "bool": "a single line with `YES` if it is true and `NO` if it is false",
    "str": "a single line with the string (an empty line when it is empty)",
    "ints": "a single line with the integers separated by single spaces (an empty line when "
    "there are none)",
    "strs": "one line per string, in order",
    "matrix": "one line per row, its values separated by single spaces",
    "groups": "one line per group, in order, its words separated by single spaces (nothing at "
    "all when there are no groups)",
}


def python_signature(problem: Problem) -> str:
    """``name(a: int, b: list[int]) -> bool``."""
    params = ", ".join(f"{p.name}: {PYTHON_TYPES[p.type]}" for p in problem.params)
    return f"{problem.name}({params}) -> {PYTHON_TYPES[problem.returns]}"


def _cpp_param(param: Param) -> str:
    # Scalars by value, containers by const reference: what a C++ programmer would write.
    kind = CPP_TYPES[param.type]
    return f"{kind} {param.name}" if param.type == "int" else f"const {kind}& {param.name}"


def cpp_signature(problem: Problem) -> str:
    """``bool name(long long a, const vector<long long>& b)``."""
    params = ", ".join(_cpp_param(p) for p in problem.params)
    return f"{CPP_TYPES[problem.returns]} {problem.name}({params})"


# --- the text on standard input and output -------------------------------------------------


def _line(values: Sequence[Any]) -> str:
    return " ".join(str(v) for v in values) + "\n"


def _encode_input(kind: ValueType, value: Any) -> str:
    if kind == "int":
        return f"{value}\n"
    if kind == "str":
        return f"{value}\n"
    if kind in ("ints", "strs"):
        return f"{len(value)}\n" + _line(value)
    if kind == "matrix":
        columns = len(value[0]) if value else 0
        return f"{len(value)} {columns}\n" + "".join(_line(row) for row in value)
    raise ValueError(f"{kind} is not an input type")


def to_stdin(problem: Problem, args: Sequence[Any]) -> str:
    """The standard input that carries ``args``."""
    return "".join(_encode_input(p.type, a) for p, a in zip(problem.params, args, strict=True))


def to_stdout(kind: ValueType, value: Any) -> str:
    """The exact standard output that prints ``value``."""
    if kind in ("int", "str"):
        return f"{value}\n"
    if kind == "bool":
        return "YES\n" if value else "NO\n"
    if kind == "ints":
        return _line(value)
    if kind == "strs":
        return "".join(f"{item}\n" for item in value)
    if kind in ("matrix", "groups"):
        return "".join(_line(row) for row in value)
    raise ValueError(f"unknown type {kind}")


def input_format(problem: Problem) -> list[str]:
    """The input format, one sentence per parameter, in order."""
    return [INPUT_FORMATS[p.type].format(name=p.name) for p in problem.params]


# --- reference programs --------------------------------------------------------------------

_PY_READ: Mapping[ValueType, str] = {
    "int": "{name} = int(next(lines))",
    "str": "{name} = next(lines)",
    "ints": "next(lines)\n    {name} = [int(x) for x in next(lines).split()]",
    "strs": "next(lines)\n    {name} = next(lines).split()",
    "matrix": "rows = int(next(lines).split()[0])\n"
    "    {name} = [[int(x) for x in next(lines).split()] for _ in range(rows)]",
}

_PY_WRITE: Mapping[ValueType, str] = {
    "int": "print(result)",
    "bool": 'print("YES" if result else "NO")',
    "str": "print(result)",
    "ints": 'print(" ".join(map(str, result)))',
    "strs": "for item in result:\n        print(item)",
    "matrix": 'for row in result:\n        print(" ".join(map(str, row)))',
    "groups": 'for row in result:\n        print(" ".join(row))',
}


def python_function(problem: Problem) -> str:
    """The reference function: the generated signature over the kind's body."""
    return f"def {python_signature(problem)}:\n{problem.python.rstrip()}\n"


def python_program(problem: Problem) -> str:
    """The reference function plus a ``main`` that reads standard input and prints the result."""
    reads = "\n    ".join(_PY_READ[p.type].format(name=p.name) for p in problem.params)
    call = f"{problem.name}({', '.join(p.name for p in problem.params)})"
    return (
        "import sys\n\n\n"
        f"{python_function(problem)}\n\n"
        "def main() -> None:\n"
        '    lines = iter(sys.stdin.read().split("\\n"))\n'
        f"    {reads}\n"
        f"    result = {call}\n"
        f"    {_PY_WRITE[problem.returns]}\n\n\n"
        "main()\n"
    )


_CPP_READ: Mapping[ValueType, tuple[str, str]] = {
    "int": ("read_int", "long long read_int() { return stoll(read_line()); }"),
    "str": ("read_line", ""),
    "ints": (
        "read_ints",
        "vector<long long> read_ints() {\n"
        "    read_line();\n"
        "    istringstream in(read_line());\n"
        "    vector<long long> values;\n"
        "    long long x;\n"
        "    while (in >> x) values.push_back(x);\n"
        "    return values;\n"
        "}",
    ),
    "strs": (
        "read_words",
        "vector<string> read_words() {\n"
        "    read_line();\n"
        "    istringstream in(read_line());\n"
        "    vector<string> words;\n"
        "    string w;\n"
        "    while (in >> w) words.push_back(w);\n"
        "    return words;\n"
        "}",
    ),
    "matrix": (
        "read_matrix",
        "vector<vector<long long>> read_matrix() {\n"
        "    istringstream head(read_line());\n"
        "    size_t rows = 0, cols = 0;\n"
        "    head >> rows >> cols;\n"
        "    vector<vector<long long>> m(rows, vector<long long>(cols));\n"
        "    for (auto& row : m) {\n"
        "        istringstream in(read_line());\n"
        "        for (auto& x : row) in >> x;\n"
        "    }\n"
        "    return m;\n"
        "}",
    ),
}

_CPP_WRITE: Mapping[ValueType, str] = {
    "int": "cout << result << '\\n';",
    "bool": 'cout << (result ? "YES" : "NO") << \'\\n\';',
    "str": "cout << result << '\\n';",
    "ints": 'for (size_t i = 0; i < result.size(); ++i) cout << (i ? " " : "") << result[i];\n'
    "    cout << '\\n';",
    "strs": "for (const auto& item : result) cout << item << '\\n';",
    "matrix": "for (const auto& row : result) {\n"
    '        for (size_t i = 0; i < row.size(); ++i) cout << (i ? " " : "") << row[i];\n'
    "        cout << '\\n';\n"
    "    }",
    "groups": "for (const auto& row : result) {\n"
    '        for (size_t i = 0; i < row.size(); ++i) cout << (i ? " " : "") << row[i];\n'
    "        cout << '\\n';\n"
    "    }",
}


def cpp_program(problem: Problem) -> str:
    """The C++17 reference program: readers for the parameter types, the kind's function, and a
    ``main`` that reads standard input and prints the result."""
    helpers = [
        "string read_line() {\n    string line;\n    getline(cin, line);\n    return line;\n}"
    ]
    for param in problem.params:
        helper = _CPP_READ[param.type][1]
        if helper and helper not in helpers:
            helpers.append(helper)
    reads = "\n    ".join(f"auto {p.name} = {_CPP_READ[p.type][0]}();" for p in problem.params)
    call = f"{problem.name}({', '.join(p.name for p in problem.params)})"
    return (
        "#include <bits/stdc++.h>\n"
        "using namespace std;\n\n"
        + "\n\n".join(helpers)
        + f"\n\n{cpp_signature(problem)} {{\n{problem.cpp.rstrip()}\n}}\n\n"
        "int main() {\n"
        "    ios::sync_with_stdio(false);\n"
        f"    {reads}\n"
        f"    auto result = {call};\n"
        f"    {_CPP_WRITE[problem.returns]}\n"
        "    return 0;\n"
        "}\n"
    )
