"""Task ids: canonical formatting, parsing, and refusal of malformed ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from environments.task_id import MAX_SEED, TaskId, TaskIdError

env_ids = st.from_regex(r"[a-z][a-z0-9_]{0,8}(/[a-z][a-z0-9_]{0,8})?", fullmatch=True)
scalars = st.one_of(
    st.text(min_size=0, max_size=12),
    st.integers(min_value=-1000, max_value=1000),
    st.booleans(),
)


@given(
    env=env_ids,
    version=st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3})?", fullmatch=True),
    seed=st.integers(min_value=0, max_value=MAX_SEED),
    options=st.dictionaries(st.from_regex(r"[a-z_]{1,10}", fullmatch=True), scalars, max_size=4),
)
def test_format_then_parse_round_trips(
    env: str, version: str, seed: int, options: dict[str, object]
) -> None:
    text = TaskId.format(env, version, seed, options)
    task = TaskId.parse(text)
    assert (task.env, task.version, task.seed) == (env, version, seed)
    expected = {k: v if isinstance(v, str) else str(v).lower() for k, v in options.items()}
    assert task.options == expected
    # Canonical: formatting the parsed options again gives the same id.
    assert TaskId.format(task.env, task.version, task.seed, task.options) == text


def test_options_are_sorted_and_scalars_rendered_as_json() -> None:
    text = TaskId.format("opt/knapsack", "2", 42, {"level": "hard", "flag": True, "n": 3})
    assert text == "opt/knapsack@2/42?flag=true&level=hard&n=3"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "math",
        "math@1",
        "math@1/",
        "math/1@7",
        "@1/7",
        "math@1/-3",
        "math@1/seven",
        "math@1/7?a=1&a=2",
        "math@1/7?novalue",
        "math@@1/7",
        "math@1/99999999999999999999",
        "math@1/9223372036854775808",
        "ma th@1/7",
        "x" * 2000 + "@1/1",
    ],
)
def test_malformed_ids_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(TaskIdError) as caught:
        TaskId.parse(text)
    assert str(caught.value)


def test_the_wire_seed_limit_is_the_task_id_limit() -> None:
    # The wire schema keeps its own copy so clients need not import environments/.
    from envserver.wire import MAX_SEED as WIRE_MAX_SEED

    assert WIRE_MAX_SEED == MAX_SEED


def test_non_scalar_options_cannot_be_part_of_an_id() -> None:
    with pytest.raises(TaskIdError, match="not a scalar"):
        TaskId.format("math", "1", 1, {"weights": [1, 2]})
