"""Numbers that are numbers: the base of every model a request fills (wire bodies, options).

JSON has no integer type of its own, and pydantic's lax mode reads ``true`` as ``1`` wherever an
integer or a float is wanted: ``{"seed": true}`` would name seed 1, ``{"level": 2, "max_attempts":
false}`` would be refused only by a bound. A boolean is never a number here, at any depth (lists,
dicts, nested models), and ``NaN``/``Infinity`` are never floats. Strings still convert (task ids
carry their options as text: ``?max_attempts=2``), so strict mode, which refuses those too, is
not the tool.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import CoreSchema, PydanticCustomError, core_schema


def _refuse_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("bool_not_number", "a boolean is not a number")
    return value


def _no_bool_numbers(schema: Any) -> Any:
    # Every int and float schema in the model's tree (its fields, their items and values,
    # nested models) gets a check in front; the JSON Schema is the inner schema's, unchanged.
    if isinstance(schema, dict):
        if schema.get("type") in ("int", "float"):
            return core_schema.no_info_before_validator_function(_refuse_bool, schema)
        return {key: _no_bool_numbers(value) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_no_bool_numbers(item) for item in schema]
    return schema


class StrictNumbers(BaseModel):
    """A model whose integers and floats refuse booleans, and whose floats refuse NaN and
    infinities (422 with ``a boolean is not a number`` / ``Input should be a finite number``)."""

    model_config = ConfigDict(allow_inf_nan=False)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: type[BaseModel], handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        schema: CoreSchema = _no_bool_numbers(handler(source))
        return schema


class Options(StrictNumbers):
    """The base of every options model (a family's or a verifier's): unknown options are
    refused, options never change once validated, and numbers are numbers."""

    model_config = ConfigDict(extra="forbid", frozen=True)
