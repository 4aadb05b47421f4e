"""The playground's options form: controls from JSON Schemas, submitted forms back to options.

Every built-in environment's options schema is drawn and a form of its defaults parses back to
options its model accepts; the edge cases use models written here.
"""

from __future__ import annotations

import enum
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from envserver.options_form import option_fields, parse_options
from envserver.registry import discover
from tests.plugins.drawn import CounterOptions


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    a: int = 1


class Odd(BaseModel):
    model_config = ConfigDict(extra="forbid")

    colour: Colour = Colour.BLUE
    maybe_colour: Colour | None = None
    count: Literal[1, 2, 3] = 2
    inner: Inner = Field(default_factory=Inner)
    either: int | str = 3
    needed: str = Field(max_length=10)
    flag: bool = False


def form_of_defaults(schema: dict[str, object]) -> dict[str, str]:
    return {f.form_name: f.value for f in option_fields(schema)}  # type: ignore[arg-type]


def test_every_built_in_environments_defaults_parse_back() -> None:
    registry = discover()
    assert len(registry.envs) > 5
    for env in registry.envs.values():
        model = env.spec.options_model
        schema = model.model_json_schema()
        options, errors = parse_options(schema, form_of_defaults(schema))
        assert errors == {}, (env.spec.id, errors)
        assert model.model_validate(options) == model(), env.spec.id


def test_controls_follow_the_schema() -> None:
    fields = {f.name: f for f in option_fields(Odd.model_json_schema())}
    assert fields["colour"].control == "select" and fields["colour"].value == "blue"
    assert fields["colour"].choices == (("red", "red"), ("blue", "blue"))
    assert fields["maybe_colour"].choices[0] == ("", "(unset)") and fields["maybe_colour"].nullable
    assert fields["count"].control == "select" and fields["count"].value == "2"
    assert fields["inner"].control == "json" and fields["either"].control == "json"
    assert fields["needed"].required and fields["needed"].control == "text"
    assert fields["flag"].control == "checkbox" and fields["flag"].value == "false"
    counter = {f.name: f for f in option_fields(CounterOptions.model_json_schema())}
    assert (counter["target"].minimum, counter["target"].maximum) == ("1", "50")
    assert counter["target"].step == "1" and counter["scale"].step == "any"
    assert counter["scale"].nullable and counter["note"].control == "textarea"


def test_submitted_values_become_typed_options() -> None:
    schema = Odd.model_json_schema()
    form = {
        "option.colour": "red",
        "option.maybe_colour": "",
        "option.count": "3",
        "option.inner": '{"a": 5}',
        "option.either": '"x"',
        "option.needed": "hi",
        "option.flag": "true",
    }
    options, errors = parse_options(schema, form)
    assert errors == {}
    assert options == {
        "colour": "red",
        "count": 3,
        "inner": {"a": 5},
        "either": "x",
        "needed": "hi",
        "flag": True,
    }
    assert Odd.model_validate(options).count == 3


@pytest.mark.parametrize(
    ("form", "name", "message"),
    [
        ({"option.count": "4"}, "count", "choose one of 1, 2, 3"),
        ({"option.inner": "{"}, "inner", "not valid JSON"),
        ({"option.needed": ""}, "needed", "required"),
    ],
)
def test_bad_values_are_errors_by_field(form: dict[str, str], name: str, message: str) -> None:
    _, errors = parse_options(Odd.model_json_schema(), {"option.needed": "x", **form})
    assert message in errors[name]


@pytest.mark.parametrize("text", ["abc", "1.5", "nan", ""])
def test_numbers_are_checked(text: str) -> None:
    schema = CounterOptions.model_json_schema()
    options, errors = parse_options(schema, {"option.target": text, "option.scale": text})
    if text == "":
        assert errors == {} and options == {}  # an empty box: the default
    elif text == "1.5":
        assert "target" in errors and options == {"scale": 1.5}
    else:
        assert "target" in errors and "scale" in errors


def test_a_required_option_left_out_is_an_error() -> None:
    assert parse_options(Odd.model_json_schema(), {})[1] == {"needed": "required"}


def test_unknown_fields_pass_on_for_the_model_to_refuse() -> None:
    options, errors = parse_options(
        Odd.model_json_schema(), {"option.needed": "x", "option.zzz": "1", "seed": "3"}
    )
    assert errors == {} and options == {"needed": "x", "zzz": "1"}


def test_submitted_text_is_shown_again() -> None:
    fields = option_fields(CounterOptions.model_json_schema(), {"option.target": "oops"})
    assert next(f for f in fields if f.name == "target").value == "oops"
