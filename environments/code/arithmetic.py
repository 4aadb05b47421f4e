"""Problems on integers: FizzBuzz variants, gcd/lcm of a list, primes, digits."""

from __future__ import annotations

import itertools
import math
import random
from functools import reduce

from environments.code.problem import Args, Param, Problem, Size, ValueType

N = Param("n", "int", "an integer `n`")
LCM_LIMIT = 10**18  # every answer fits a signed 64-bit integer, so C++ needs no big numbers


def fizzbuzz(rng: random.Random) -> Problem:
    """FizzBuzz with drawn divisors and words."""
    # Neither divisor divides the other, so that all four outcomes occur.
    a, b = rng.choice([(x, y) for x in range(2, 8) for y in range(2, 8) if x % y and y % x])
    first, second = rng.choice([("Fizz", "Buzz"), ("Foo", "Bar"), ("Ping", "Pong"), ("Tic", "Tac")])

    def solve(n: int) -> list[str]:
        out = []
        for i in range(1, n + 1):
            text = (first if i % a == 0 else "") + (second if i % b == 0 else "")
            out.append(text or str(i))
        return out

    def case(rng: random.Random, size: Size) -> Args:
        return (rng.randint(1, size.pick(15, 60, 300)),)

    return Problem(
        name=rng.choice(["fizzbuzz", "fizz_buzz", "number_words"]),
        params=(Param("n", "int", "a positive integer `n`"),),
        returns="strs",
        task=f"the list of strings for the numbers 1 to `n` in order, where a number divisible by "
        f"{a} becomes `{first}`, a number divisible by {b} becomes `{second}`, a number divisible "
        f"by both becomes `{first}{second}`, and every other number is written in decimal",
        solve=solve,
        python=(
            "    out = []\n"
            "    for i in range(1, n + 1):\n"
            f'        text = ("{first}" if i % {a} == 0 else "") + '
            f'("{second}" if i % {b} == 0 else "")\n'
            "        out.append(text or str(i))\n"
            "    return out\n"
        ),
        cpp=(
            "    vector<string> out;\n"
            "    for (long long i = 1; i <= n; ++i) {\n"
            "        string text;\n"
            f'        if (i % {a} == 0) text += "{first}";\n'
            f'        if (i % {b} == 0) text += "{second}";\n'
            "        out.push_back(text.empty() ? to_string(i) : text);\n"
            "    }\n"
            "    return out;\n"
        ),
        random_case=case,
        edge_cases=((1,), (a * b,), (max(a, b),)),
    )


def gcd_lcm(rng: random.Random) -> Problem:
    """The gcd or the lcm of a non-empty list of positive integers."""
    if rng.random() < 0.5:

        def gcd_case(rng: random.Random, size: Size) -> Args:
            # A planted common factor, else the answer would nearly always be 1.
            factor = rng.randint(1, size.pick(6, 50, 10**5))
            count = rng.randint(1, size.pick(5, 20, 150))
            top = size.pick(10, 100, 10**4)
            return ([factor * rng.randint(1, top) for _ in range(count)],)

        return Problem(
            name=rng.choice(["gcd_of_list", "list_gcd"]),
            params=(Param("nums", "ints", "a non-empty list of positive integers `nums`"),),
            returns="int",
            task="the greatest common divisor of all the numbers in `nums`",
            solve=lambda nums: reduce(math.gcd, nums),
            python=(
                "    result = nums[0]\n"
                "    for x in nums[1:]:\n"
                "        while x:\n"
                "            result, x = x, result % x\n"
                "    return result\n"
            ),
            cpp=(
                "    long long result = 0;\n"
                "    for (long long x : nums) result = gcd(result, x);\n"
                "    return result;\n"
            ),
            random_case=gcd_case,
            edge_cases=(([rng.randint(2, 99)],), ([12, 18, 30],), ([7, 1],), ([10**9, 10**9],)),
        )

    def lcm_case(rng: random.Random, size: Size) -> Args:
        count = rng.randint(1, size.pick(4, 6, 8))
        # Values below the count-th root of the limit: the answer fits 64 bits by construction.
        top = min(size.pick(12, 200, 10**18), int(LCM_LIMIT ** (1 / count)))
        while top**count > LCM_LIMIT:
            top -= 1
        nums = [rng.randint(1, top) for _ in range(count)]
        # Divisors of earlier numbers repeat factors without raising the answer.
        extra = [rng.choice([d for d in range(1, 50) if x % d == 0]) for x in nums]
        return (nums + extra[: rng.randint(0, size.level * 2)],)

    return Problem(
        name=rng.choice(["lcm_of_list", "list_lcm"]),
        params=(Param("nums", "ints", "a non-empty list of positive integers `nums`"),),
        returns="int",
        task="the least common multiple of all the numbers in `nums`",
        rules="The answer is at most 10^18.",
        solve=lambda nums: math.lcm(*nums),
        python=(
            "    result = 1\n"
            "    for x in nums:\n"
            "        a, b = result, x\n"
            "        while b:\n"
            "            a, b = b, a % b\n"
            "        result = result // a * x\n"
            "    return result\n"
        ),
        cpp=(
            "    long long result = 1;\n"
            "    for (long long x : nums) result = result / gcd(result, x) * x;\n"
            "    return result;\n"
        ),
        random_case=lcm_case,
        edge_cases=(([rng.randint(2, 99)],), ([4, 6, 10],), ([1, 1],), ([999983, 1000003],)),
    )


def primes_up_to(n: int) -> list[int]:
    """The primes up to ``n`` (a sieve: hard cases go to 10^5)."""
    if n < 2:
        return []
    flags = bytearray([1]) * (n + 1)
    flags[0] = flags[1] = 0
    for p in range(2, math.isqrt(n) + 1):
        if flags[p]:
            flags[p * p :: p] = bytes(len(range(p * p, n + 1, p)))
    return list(itertools.compress(range(n + 1), flags))


def primes(rng: random.Random) -> Problem:
    """Primes up to ``n``: their list, their count or their sum."""
    twist = rng.choice(["list", "count", "sum"])
    sieve = (
        "    if n < 2:\n"
        "        return {empty}\n"
        "    is_prime = [True] * (n + 1)\n"
        "    is_prime[0] = is_prime[1] = False\n"
        "    for i in range(2, int(n**0.5) + 1):\n"
        "        if is_prime[i]:\n"
        "            for j in range(i * i, n + 1, i):\n"
        "                is_prime[j] = False\n"
    )
    cpp_sieve = (
        "    vector<bool> is_prime(max(n + 1, 2LL), true);\n"
        "    is_prime[0] = is_prime[1] = false;\n"
        "    for (long long i = 2; i * i <= n; ++i)\n"
        "        if (is_prime[i])\n"
        "            for (long long j = i * i; j <= n; j += i) is_prime[j] = false;\n"
    )
    problem: tuple[str, ValueType, str, str, str]
    if twist == "list":
        problem = (
            rng.choice(["primes_up_to", "list_primes"]),
            "ints",
            "the list of all prime numbers less than or equal to `n`, in increasing order",
            sieve.format(empty="[]") + "    return [i for i in range(n + 1) if is_prime[i]]\n",
            cpp_sieve + "    vector<long long> out;\n"
            "    for (long long i = 2; i <= n; ++i) if (is_prime[i]) out.push_back(i);\n"
            "    return out;\n",
        )
        top = (30, 500, 5000)
    elif twist == "count":
        problem = (
            rng.choice(["count_primes", "prime_count"]),
            "int",
            "the number of prime numbers less than or equal to `n`",
            sieve.format(empty="0") + "    return sum(is_prime)\n",
            cpp_sieve + "    long long count = 0;\n"
            "    for (long long i = 2; i <= n; ++i) count += is_prime[i];\n"
            "    return count;\n",
        )
        top = (30, 2000, 10**5)
    else:
        problem = (
            rng.choice(["sum_primes", "prime_sum"]),
            "int",
            "the sum of all prime numbers less than or equal to `n`",
            sieve.format(empty="0") + "    return sum(i for i in range(n + 1) if is_prime[i])\n",
            cpp_sieve + "    long long total = 0;\n"
            "    for (long long i = 2; i <= n; ++i) if (is_prime[i]) total += i;\n"
            "    return total;\n",
        )
        top = (30, 2000, 10**5)
    name, returns, task, python, cpp = problem

    def solve(n: int) -> int | list[int]:
        found = primes_up_to(n)
        if twist == "list":
            return found
        return len(found) if twist == "count" else sum(found)

    def case(rng: random.Random, size: Size) -> Args:
        return (rng.randint(0, size.pick(*top)),)

    return Problem(
        name=name,
        params=(Param("n", "int", "a non-negative integer `n`"),),
        returns=returns,
        task=task,
        rules="1 is not a prime.",
        solve=solve,
        python=python,
        cpp=cpp,
        random_case=case,
        edge_cases=((0,), (1,), (2,), (rng.choice([97, 100, 101]),)),
    )


def digits(rng: random.Random) -> Problem:
    """A function of the decimal digits: powered digit sum, digital root, non-zero product."""
    p = rng.randint(2, 4)
    twist = rng.choice(["power", "root", "product"])
    if twist == "power":
        name = rng.choice(["digit_power_sum", "sum_of_digit_powers"])
        powers = {2: "squares", 3: "cubes", 4: "fourth powers"}[p]
        task = f"the sum of the {powers} of the decimal digits of `n`"
        python = f"    return sum(int(d) ** {p} for d in str(n))\n"
        cpp = (
            "    long long total = 0;\n"
            "    do {\n"
            "        long long d = n % 10, term = 1;\n"
            f"        for (int i = 0; i < {p}; ++i) term *= d;\n"
            "        total += term;\n"
            "        n /= 10;\n"
            "    } while (n > 0);\n"
            "    return total;\n"
        )
    elif twist == "root":
        name = rng.choice(["digital_root", "repeated_digit_sum"])
        task = (
            "the digital root of `n`: replace `n` by the sum of its decimal digits until a single "
            "digit remains, and return that digit"
        )
        python = "    while n >= 10:\n        n = sum(int(d) for d in str(n))\n    return n\n"
        cpp = (
            "    while (n >= 10) {\n"
            "        long long total = 0;\n"
            "        for (; n > 0; n /= 10) total += n % 10;\n"
            "        n = total;\n"
            "    }\n"
            "    return n;\n"
        )
    else:
        name = rng.choice(["nonzero_digit_product", "product_of_digits"])
        task = "the product of the non-zero decimal digits of `n` (1 when it has none, as for 0)"
        python = (
            "    result = 1\n"
            "    for d in str(n):\n"
            '        if d != "0":\n'
            "            result *= int(d)\n"
            "    return result\n"
        )
        cpp = (
            "    long long result = 1;\n"
            "    for (; n > 0; n /= 10) if (n % 10) result *= n % 10;\n"
            "    return result;\n"
        )

    def solve(n: int) -> int:
        if twist == "power":
            return sum(int(d) ** p for d in str(n))
        if twist == "root":
            while n >= 10:
                n = sum(int(d) for d in str(n))
            return n
        return math.prod(int(d) for d in str(n) if d != "0")

    def case(rng: random.Random, size: Size) -> Args:
        return (rng.randint(0, 10 ** rng.randint(1, size.pick(3, 9, 18))),)

    return Problem(
        name=name,
        params=(Param("n", "int", "a non-negative integer `n` (at most 10^18)"),),
        returns="int",
        task=task,
        solve=solve,
        python=python,
        cpp=cpp,
        random_case=case,
        edge_cases=((0,), (10 ** rng.randint(2, 6),), (999999999999999999,), (rng.randint(1, 9),)),
    )
