"""An environment's options as an HTML form: fields from its options JSON Schema, and the
submitted form back to an options object.

Each property becomes one control: an enum a select, a boolean a checkbox, a number a number
box, a long string a text area, a string a text box; anything else (objects, lists, unions) a
text area holding JSON. Parsing is lenient only where a form must be (an empty box means "the
default"); everything else is left to the environment's own options model, whose errors the
service reports with the field's path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Control = Literal["select", "checkbox", "number", "text", "textarea", "json"]
FIELD_PREFIX = "option."
"""Form fields named ``option.<name>`` carry the options; other fields are the page's own."""
LONG_TEXT = 200
"""Strings allowed to be longer than this get a text area."""


@dataclass(frozen=True)
class OptionField:
    """One option's control. ``value`` is the text the control shows (the default, or what was
    submitted); ``choices`` are a select's (value, label) pairs and ``values`` the JSON values
    its choices stand for."""

    name: str
    title: str
    description: str
    control: Control
    value: str
    choices: tuple[tuple[str, str], ...] = ()
    values: tuple[Any, ...] = ()
    required: bool = False
    nullable: bool = False
    integer: bool = False
    minimum: str | None = None
    maximum: str | None = None
    max_length: int | None = None

    @property
    def form_name(self) -> str:
        """The form field's name."""
        return FIELD_PREFIX + self.name

    @property
    def step(self) -> str:
        """A number box's step: whole numbers for an integer."""
        return "1" if self.integer else "any"


def _text(value: Any) -> str:
    """A JSON value as a control shows it: strings as they are, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _resolve(schema: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    # pydantic writes enums and nested models as {"$ref": "#/$defs/X"}, sometimes in allOf.
    seen = 0
    while seen < 20:
        seen += 1
        if "$ref" in schema and isinstance(schema["$ref"], str):
            target = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            schema = {**schema["allOf"][0], **rest}
        else:
            break
    return schema


def _branches(schema: dict[str, Any], defs: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The schema without its ``null`` alternative, and whether null is allowed."""
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            resolved = [_resolve(o, defs) for o in options if isinstance(o, dict)]
            rest = [o for o in resolved if o.get("type") != "null"]
            nullable = len(rest) < len(resolved)
            if len(rest) == 1:
                merged = {k: v for k, v in schema.items() if k != key}
                return {**rest[0], **merged}, nullable
            return {**schema, "type": "json"}, nullable
    kinds = schema.get("type")
    if isinstance(kinds, list):
        rest_kinds = [k for k in kinds if k != "null"]
        kind = rest_kinds[0] if len(rest_kinds) == 1 else "json"
        return {**schema, "type": kind}, len(rest_kinds) < len(kinds)
    return schema, False


def _control(schema: dict[str, Any]) -> Control:
    if "enum" in schema or "const" in schema:
        return "select"
    kind = schema.get("type")
    if kind == "boolean":
        return "checkbox"
    if kind in ("integer", "number"):
        return "number"
    if kind == "string":
        long = schema.get("maxLength") is None or schema["maxLength"] > LONG_TEXT
        return "textarea" if long else "text"
    return "json"


def option_fields(
    schema: dict[str, Any], submitted: Mapping[str, str] | None = None
) -> list[OptionField]:
    """One field per property of the options ``schema``; ``submitted`` (form name to text)
    replaces the defaults, so a form shown again after an error keeps what was typed."""
    defs = schema.get("$defs", {})
    required = set(schema.get("required", ()))
    fields = []
    for name, raw in schema.get("properties", {}).items():
        if not isinstance(raw, dict):
            continue
        prop, nullable = _branches(_resolve(raw, defs), defs)
        control = _control(prop)
        default = raw.get("default", prop.get("default"))
        choices: tuple[tuple[str, str], ...] = ()
        values = tuple(prop["enum"] if "enum" in prop else [prop.get("const")])
        if control == "select":
            choices = tuple((_text(v), _text(v)) for v in values)
            if nullable:
                choices = (("", "(unset)"), *choices)
        value = _text(default)
        if control == "json" and default is not None:
            value = json.dumps(default)
        if submitted is not None and FIELD_PREFIX + name in submitted:
            value = submitted[FIELD_PREFIX + name]
        fields.append(
            OptionField(
                name=name,
                title=str(prop.get("title") or raw.get("title") or name),
                description=str(raw.get("description") or prop.get("description") or ""),
                control=control,
                value=value,
                choices=choices,
                values=values if control == "select" else (),
                required=name in required,
                nullable=nullable,
                integer=prop.get("type") == "integer",
                minimum=_bound(prop, "minimum", "exclusiveMinimum"),
                maximum=_bound(prop, "maximum", "exclusiveMaximum"),
                max_length=prop.get("maxLength"),
            )
        )
    return fields


def _bound(schema: dict[str, Any], inclusive: str, exclusive: str) -> str | None:
    value = schema.get(inclusive, schema.get(exclusive))
    return None if value is None else _text(value)


def _finite(value: float) -> float:
    if not abs(value) < float("inf"):  # nan and the infinities
        raise ValueError(value)
    return value


def _parse(field: OptionField, text: str) -> Any:
    """The option value ``text`` means; raises ValueError with a message for a person."""
    if field.control == "checkbox":
        return text == "true"
    if field.control == "select":
        for value in field.values:
            if _text(value) == text:
                return value
        raise ValueError(f"choose one of {', '.join(c for c, _ in field.choices if c)}")
    if field.control == "number":
        try:
            return int(text.strip()) if field.integer else _finite(float(text.strip()))
        except ValueError:
            kind = "an integer" if field.integer else "a number"
            raise ValueError(f"{text!r} is not {kind}") from None
    if field.control == "json":
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
    return text


def parse_options(
    schema: dict[str, Any], submitted: Mapping[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The options the form ``submitted`` (form name to text) sets, and the errors by option
    name. An empty control leaves its option to the default; a required one is an error.
    Fields for options the schema does not name are passed on, for the model to refuse."""
    options: dict[str, Any] = {}
    errors: dict[str, str] = {}
    fields = {f.name: f for f in option_fields(schema)}
    for form_name, text in submitted.items():
        if not form_name.startswith(FIELD_PREFIX):
            continue
        name = form_name.removeprefix(FIELD_PREFIX)
        field = fields.get(name)
        if field is None:
            options[name] = text
            continue
        if text == "" and field.control != "checkbox":
            if field.required:
                errors[name] = "required"
            continue
        try:
            options[name] = _parse(field, text)
        except ValueError as exc:
            errors[name] = str(exc)
    for name, field in fields.items():
        if field.required and name not in options and name not in errors:
            errors[name] = "required"
    return options, errors
