"""L3, format consistency: the forms a prompt can ask an answer in, read from its words, and the
reference answer rewritten in each. The form the prompt asks for must score 1, or a solver
that obeys the prompt earns 0 (a prompt that asks for words while the scorer reads digits).

Only forms that rules can recognise and produce are here (working before the answer, numbers in
English words, lists separated by commas); free-form requests ("in base 3", "as a fraction",
with units) need the model reviewer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from environments.evo.review import answer_of

_ONES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)  # fmt: skip
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))

WORDS = re.compile(
    r"\b(?:in|as|using|with)\s+(?:english\s+)?words\b|\bspell(?:ed|t)?\s+(?:it\s+)?out\b"
    r"|\b(?:not|no)\s+(?:as\s+)?digits\b",
    re.IGNORECASE,
)
COMMAS = re.compile(r"\bcomma[- ]separated\b|\bseparated\s+by\s+commas\b", re.IGNORECASE)
WORKING = "Let me work through this step by step before answering.\n\n"


def in_words(number: int, hyphen: str = "-") -> str:
    """``number`` in English words: 42 -> "forty-two" (``hyphen`` joins tens and ones)."""
    if number < 0:
        return "minus " + in_words(-number, hyphen)
    if number < 20:
        return _ONES[number]
    if number < 100:
        tens, ones = divmod(number, 10)
        return _TENS[tens] + (hyphen + _ONES[ones] if ones else "")
    if number < 1000:
        hundreds, rest = divmod(number, 100)
        return _ONES[hundreds] + " hundred" + (" " + in_words(rest, hyphen) if rest else "")
    for scale, name in _SCALES:
        if number >= scale:
            high, rest = divmod(number, scale)
            return f"{in_words(high, hyphen)} {name}" + (
                " " + in_words(rest, hyphen) if rest else ""
            )
    raise AssertionError("unreachable")


def _numbers_as_words(hyphen: str) -> Callable[[str], str]:
    def rewrite(answer: str) -> str:
        return re.sub(r"-?\d{1,15}", lambda m: in_words(int(m.group()), hyphen), answer)

    return rewrite


def _commas(answer: str) -> str:
    return ", ".join(answer.replace(",", " ").split())


@dataclass(frozen=True)
class Form:
    """A form the prompt asks for; ``variants`` rewrite a reference answer into it (one of them
    must score 1: "forty-two" or "forty two")."""

    name: str
    variants: tuple[Callable[[str], str], ...]


WORDS_FORM = Form("numbers in words", (_numbers_as_words("-"), _numbers_as_words(" ")))
COMMAS_FORM = Form("a list separated by commas", (_commas,))


def asked_forms(prompt: str, answer_format: str) -> list[Form]:
    """The forms the task asks the answer in (of those the rules know): words anywhere in the
    prompt (nothing else there says "in words"), commas in ``ANSWER_FORMAT`` only (a prompt may
    list its own data separated by commas)."""
    forms = [WORDS_FORM] if WORDS.search(prompt) or WORDS.search(answer_format) else []
    return forms + ([COMMAS_FORM] if COMMAS.search(answer_format) else [])


def rewritten(reference: str, form: Form) -> list[str]:
    """The reference response with its answer rewritten in ``form``, one per variant (none when
    rewriting changes nothing: the reference is in that form already)."""
    answer = answer_of(reference)
    responses = []
    for variant in form.variants:
        changed = variant(answer)
        if changed != answer:
            responses.append(f"<answer>{changed}</answer>")
    return responses
