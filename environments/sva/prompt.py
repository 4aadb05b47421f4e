"""Prompts as FVEval's zero-shot NL2SVA launchers build them (NVlabs/FVEval, Apache-2.0,
``fv_eval/prompts_nl2sva_{human,machine}.py``): a system message that sets the task, then the
testbench (Human only: FVEval does not show Machine's shared dummy module), the sentence and the
answer format with FVEval's one-line example."""

from __future__ import annotations

from environments.base import Observation

SYSTEM = (
    "You are an AI assistant tasked with formal verification of register transfer level (RTL) "
    "designs.\nYour job is to translate a description of an assertion to concrete "
    "SystemVerilog Assertion (SVA) implementation.\n"
)
_QUESTION = "\nQuestion: Create a SVA assertion that checks: "
_FORMAT = (
    "\nDo not add code to output an error message string.\n"
    "Enclose your SVA code with ```systemverilog and ```. Only output the code snippet and do "
    "NOT output anything else.\n\nFor example,\n```systemverilog\n{example}\n```\nAnswer:"
)
_MACHINE_EXAMPLE = "assert property (@(posedge clk)\n    (sig_A && sig_B) != 1'b1\n);"
_HUMAN_EXAMPLE = (
    "asrt: assert property (@(posedge clk) disable iff (tb_reset)\n    (a && b) != 1'b1\n);"
)
_TESTBENCH = "Here is the testbench to perform your translation:\n"


def nl2sva_prompt(sentence: str, testbench: str | None, *, human: bool) -> Observation:
    """Chat messages for one task: FVEval's system prompt and zero-shot user prompt.

    ``testbench`` is shown when given (Human rows; generated tasks, whose widths matter)."""
    example = _HUMAN_EXAMPLE if human else _MACHINE_EXAMPLE
    question = _QUESTION + sentence + "\n" + _FORMAT.format(example=example)
    user = ("\n\n" + _TESTBENCH + "\n" + testbench + "\n" if testbench else "\n") + question
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def fenced(assertion: str) -> str:
    """An answer in the requested format."""
    return f"```systemverilog\n{assertion.strip()}\n```"
