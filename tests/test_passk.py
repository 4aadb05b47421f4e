"""pass@k: the unbiased estimator against hand-computed values and the binomial form, groups and
bootstrap intervals (``clients/passk.py``); the end-to-end measurement through a live server is
in ``tests/test_curriculum_server.py``."""

from __future__ import annotations

import math

import pytest

from clients.passk import ALL, TaskResult, estimate, pass_at_k, table
from clients.train.evaluate import parse_ks


def test_pass_at_k_by_hand() -> None:
    # n = 5 samples, c = 2 correct. pass@1 = c / n = 0.4.
    # pass@2 = 1 - C(3, 2) / C(5, 2) = 1 - 3/10 = 0.7; pass@3 = 1 - C(3, 3) / C(5, 3) = 0.9;
    # pass@4 = 1 - 0 (C(3, 4) = 0: four draws always include a correct one).
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)
    assert pass_at_k(5, 2, 4) == 1.0
    assert pass_at_k(5, 0, 5) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0


def test_pass_at_k_is_the_binomial_form_without_large_binomials() -> None:
    for n in (1, 2, 7, 32, 200):
        for c in range(0, n + 1, max(1, n // 9)):
            for k in sorted({1, min(2, n), n // 2 or 1, n}):
                exact = 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k(n, c, k) == pytest.approx(exact, abs=1e-12), (n, c, k)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 5, 1), (4, -1, 1), (4, 1, 0), (4, 1, 5)])
def test_pass_at_k_refuses_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_groups_means_and_intervals() -> None:
    results = [
        TaskResult("t1", "easy", 4, 4),
        TaskResult("t2", "easy", 4, 2),
        TaskResult("t3", "hard", 4, 0),
        TaskResult("t4", "hard", 4, 1),
        TaskResult("t5", "hard", 1, 1, masked=3),  # too few samples for k = 2
    ]
    rows = {(r.group, r.k): r for r in estimate(results, [1, 2], seed=3)}
    assert [g for g, _ in rows] == ["easy", "easy", "hard", "hard", ALL, ALL]
    # easy: pass@1 = (1 + 0.5) / 2; pass@2 = (1 + (1 - C(2,2)/C(4,2))) / 2 = (1 + 5/6) / 2.
    assert rows["easy", 1].value == pytest.approx(0.75)
    assert rows["easy", 2].value == pytest.approx((1 + 5 / 6) / 2)
    # hard at k = 2 leaves out t5 (one sample): (0 + (1 - C(3,2)/C(4,2))) / 2 = 0.25.
    assert rows["hard", 2].tasks == 2
    assert rows["hard", 2].value == pytest.approx(0.25)
    assert rows["hard", 1].value == pytest.approx((0 + 0.25 + 1) / 3)
    assert rows[ALL, 1].tasks == 5
    for row in rows.values():
        assert row.low <= row.value <= row.high
    # Spread tasks give a wide interval; identical tasks none.
    assert rows["easy", 1].high - rows["easy", 1].low > 0.2
    same = estimate([TaskResult(f"t{i}", "g", 8, 4) for i in range(10)], [1])[0]
    assert (same.low, same.value, same.high) == pytest.approx((0.5, 0.5, 0.5))


def test_the_bootstrap_is_seeded() -> None:
    results = [TaskResult(f"t{i}", "g", 8, i % 9) for i in range(30)]
    assert estimate(results, [1, 4], seed=1) == estimate(results, [1, 4], seed=1)
    assert estimate(results, [1, 4], seed=1) != estimate(results, [1, 4], seed=2)


def test_a_k_above_every_task_is_reported_empty() -> None:
    rows = estimate([TaskResult("t", "g", 2, 1)], [1, 8])
    assert rows[1].tasks == 0 and math.isnan(rows[1].value)
    assert table(rows)[-1].split()[:4] == ["g", "8", "-", "-"]


def test_parse_ks() -> None:
    assert parse_ks("32, 1,8,8") == [1, 8, 32]
    for bad in ("", "0", "1,x", "-1"):
        with pytest.raises(ValueError, match="positive integers"):
            parse_ks(bad)
