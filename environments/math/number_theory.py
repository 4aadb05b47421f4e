"""Greatest common divisors, least common multiples and modular arithmetic."""

from __future__ import annotations

import math
import random

from environments.math.problem import Problem, exact


def gcd_lcm(rng: random.Random) -> Problem:
    """The gcd or the lcm of two numbers built to share a common factor."""
    common = rng.randint(2, 40)
    while True:
        m, n = rng.sample(range(2, 21), 2)
        # If one number divided the other, the answer would be one of the numbers shown.
        if m % n and n % m:
            break
    a, b = common * m, common * n
    if rng.random() < 0.5:
        return Problem(
            f"What is the greatest common divisor of ${a}$ and ${b}$?", exact(math.gcd(a, b))
        )
    return Problem(f"What is the least common multiple of ${a}$ and ${b}$?", exact(math.lcm(a, b)))


def modular_arithmetic(rng: random.Random) -> Problem:
    """The remainder of a large power, or the solution of a linear congruence."""
    if rng.random() < 0.5:
        base, exponent, modulus = rng.randint(2, 30), rng.randint(20, 500), rng.randint(3, 23)
        statement = f"What is the remainder when ${base}^{{{exponent}}}$ is divided by ${modulus}$?"
        return Problem(statement, exact(pow(base, exponent, modulus)))
    modulus = rng.choice([7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47])
    a, b = rng.randint(2, modulus - 1), rng.randint(1, modulus - 1)
    solution = b * pow(a, -1, modulus) % modulus
    statement = (
        f"Find the smallest non-negative integer $x$ such that "
        f"${a}x \\equiv {b} \\pmod{{{modulus}}}$."
    )
    return Problem(statement, exact(solution))
