"""The prompt, in the original's structure: markdown sections in a fixed order."""

from __future__ import annotations

from environments.opt.task import Instance, OptTask

INSTRUCTIONS = (
    "Please think it step by step and output the chain of thought. Ensure your response stays "
    "within the maximum token limit. Avoid repeating or padding the output."
)
RESPONSE_FORMAT = (
    "Ensure that your final answer strictly follows the required Submission Format. Your "
    "response should end with: Answer: YOUR ANSWER (do not include angle brackets)."
)


def build_prompt(task: OptTask, instance: Instance) -> str:
    """Introduction, task description, question, example, submission format, instructions and
    response format, each a ``# Section``. The question is the instance as Python prints it, as
    in the original."""
    sections = {
        "Introduction": f"You are a great expert solving {task.original_key} question. You "
        "should propose a solution to this question.",
        "Task description": task.description,
        "Question": f"The {task.original_key} question is: {instance}",
        "Example Input and Output": "Here is the example input and output: "
        f"Input: {task.example_input} Output: {task.example_output}",
        "Submission Format": task.submission_format,
        "Instructions": INSTRUCTIONS,
        "Response format": RESPONSE_FORMAT,
    }
    return "\n\n".join(f"# {title}\n{text}" for title, text in sections.items())
