"""Problems on strings: counting letters, words, brackets, run-length encoding, anagrams,
rotations."""

from __future__ import annotations

import random
from collections.abc import Callable

from environments.code.problem import Args, Param, Problem, Size, word

S = Param("s", "str", "a string `s`")
LOWER = "abcdefghijklmnopqrstuvwxyz"


def _text(rng: random.Random, size: Size) -> str:
    """Words of mixed case with digits and punctuation, separated by single spaces."""
    alphabet = LOWER + LOWER.upper() + "0123456789.,!?"
    words = [word(rng, alphabet, 1, 8) for _ in range(rng.randint(0, size.pick(4, 12, 60)))]
    return " ".join(words)


def count_letters(rng: random.Random) -> Problem:
    """How many characters of a string belong to a letter class (vowels, consonants, a set)."""
    chosen = "".join(sorted(rng.sample(LOWER, 3)))
    twists: list[tuple[str, str, str, Callable[[str], bool], str]] = [
        ("count_vowels", "vowels (`a e i o u`)", "aeiou", lambda ch: ch in "aeiou", ""),
        ("count_vowels", "vowels (`a e i o u`) or `y`", "aeiouy", lambda ch: ch in "aeiouy", ""),
        (
            "count_consonants",
            "consonants (letters other than `a e i o u`)",
            "aeiou",
            lambda ch: ch in LOWER and ch not in "aeiou",
            "not",
        ),
        (
            "count_chosen_letters",
            f"one of the letters `{' '.join(chosen)}`",
            chosen,
            lambda ch: ch in chosen,
            "",
        ),
    ]
    name, which, letters, counted, negate = rng.choice(twists)
    if negate:
        python = (
            f'    return sum(1 for ch in s.lower() if ch.isalpha() and ch not in "{letters}")\n'
        )
        cpp_test = f'isalpha((unsigned char)ch) && string("{letters}").find(lower) == string::npos'
    else:
        python = f'    return sum(1 for ch in s.lower() if ch in "{letters}")\n'
        cpp_test = f'string("{letters}").find(lower) != string::npos'
    return Problem(
        name=name,
        params=(S,),
        returns="int",
        task=f"the number of characters of `s` that are {which}, counting upper and lower case",
        rules="`s` holds ASCII letters, digits, spaces and punctuation.",
        solve=lambda s: sum(1 for ch in s.lower() if counted(ch)),
        python=python,
        cpp=(
            "    long long count = 0;\n"
            "    for (char ch : s) {\n"
            "        char lower = (char)tolower((unsigned char)ch);\n"
            f"        if ({cpp_test}) ++count;\n"
            "    }\n"
            "    return count;\n"
        ),
        random_case=lambda rng, size: (_text(rng, size),),
        edge_cases=(("",), ("AEIOU Yy xyz",), ("12345 !?",), (f"{chosen.upper()}{chosen}",)),
    )


def reverse_words(rng: random.Random) -> Problem:
    """Reverse the order of the words, or each word's letters, normalising the spaces."""
    if rng.random() < 0.5:
        name, task = "reverse_words", "the words of `s` in reverse order"
        python = '    return " ".join(reversed(s.split()))\n'
        cpp_join = "reverse(words.begin(), words.end());\n"

        def solve(s: str) -> str:
            return " ".join(reversed(s.split()))

    else:
        name, task = "reverse_each_word", "`s` with the letters of every word reversed"
        python = '    return " ".join(word[::-1] for word in s.split())\n'
        cpp_join = "for (auto& w : words) reverse(w.begin(), w.end());\n"

        def solve(s: str) -> str:
            return " ".join(w[::-1] for w in s.split())

    def case(rng: random.Random, size: Size) -> Args:
        words = [word(rng, LOWER + LOWER.upper(), 1, 7) for _ in range(rng.randint(1, 10))]
        if size.level == 0 or rng.random() < 0.3:
            return (" ".join(words),)
        # Irregular spacing: the statement promises any number of spaces, anywhere.
        gaps = [" " * rng.randint(1, 3) for _ in words]
        edges = " " * rng.randint(0, 2), " " * rng.randint(0, 2)
        return (
            edges[0] + "".join(w + g for w, g in zip(words, gaps, strict=True))[:-1] + edges[1],
        )

    return Problem(
        name=name,
        params=(S,),
        returns="str",
        task=task,
        rules="A word is a maximal run of non-space characters. Words in `s` are separated by "
        "one or more spaces and `s` may start or end with spaces; in the result the words are "
        "separated by single spaces, with no space at the start or the end.",
        solve=solve,
        python=python,
        cpp=(
            "    istringstream in(s);\n"
            "    vector<string> words;\n"
            "    string w;\n"
            "    while (in >> w) words.push_back(w);\n"
            f"    {cpp_join}"
            "    string out;\n"
            '    for (size_t i = 0; i < words.size(); ++i) out += (i ? " " : "") + words[i];\n'
            "    return out;\n"
        ),
        random_case=case,
        edge_cases=(("",), ("single",), ("  two   words ",), ("   ",)),
    )


def balanced_brackets(rng: random.Random) -> Problem:
    """Whether the brackets of a string are balanced, with one to three bracket types."""
    pairs = rng.choice(["()", "()[]", "()[]{}"])
    with_letters = rng.random() < 0.5
    opens, closes = pairs[0::2], pairs[1::2]
    shown = " ".join(f"`{o}{c}`" for o, c in zip(opens, closes, strict=True))

    def solve(s: str) -> bool:
        stack: list[str] = []
        for ch in s:
            if ch in opens:
                stack.append(ch)
            elif ch in closes and (not stack or stack.pop() != opens[closes.index(ch)]):
                return False
        return not stack

    def balanced(rng: random.Random, pairs_left: int) -> str:
        out = ""
        while pairs_left > 0:
            inside = rng.randint(0, pairs_left - 1)
            kind = rng.randrange(len(opens))
            out += opens[kind] + balanced(rng, inside) + closes[kind]
            pairs_left -= inside + 1
        return out

    def case(rng: random.Random, size: Size) -> Args:
        chars = list(balanced(rng, rng.randint(1, size.pick(4, 12, 80))))
        if rng.random() < 0.5:  # break it: delete, change or move one bracket
            i = rng.randrange(len(chars))
            edit = rng.randrange(3)
            if edit == 0:
                del chars[i]
            elif edit == 1:
                chars[i] = rng.choice(pairs)
            else:
                chars.insert(rng.randrange(len(chars)), chars.pop(i))
        if with_letters:
            for _ in range(rng.randint(0, len(chars))):
                chars.insert(rng.randint(0, len(chars)), rng.choice("abxyz+-*"))
        return ("".join(chars),)

    other = (
        "Characters other than brackets may appear and are ignored."
        if with_letters
        else "`s` holds only these bracket characters."
    )
    return Problem(
        name=rng.choice(["is_balanced", "brackets_match"]),
        params=(S,),
        returns="bool",
        task=f"whether the brackets in `s` are balanced, for the bracket pairs {shown}",
        rules="Balanced means every opening bracket is closed by a closing bracket of the same "
        f"type, in the right order (properly nested); the empty string is balanced. {other}",
        solve=solve,
        python=(
            f'    opens, closes = "{opens}", "{closes}"\n'
            "    stack = []\n"
            "    for ch in s:\n"
            "        if ch in opens:\n"
            "            stack.append(ch)\n"
            "        elif ch in closes:\n"
            "            if not stack or stack.pop() != opens[closes.index(ch)]:\n"
            "                return False\n"
            "    return not stack\n"
        ),
        cpp=(
            f'    const string opens = "{opens}", closes = "{closes}";\n'
            "    vector<char> stack;\n"
            "    for (char ch : s) {\n"
            "        if (opens.find(ch) != string::npos) {\n"
            "            stack.push_back(ch);\n"
            "        } else if (closes.find(ch) != string::npos) {\n"
            "            if (stack.empty() || stack.back() != opens[closes.find(ch)])\n"
            "                return false;\n"
            "            stack.pop_back();\n"
            "        }\n"
            "    }\n"
            "    return stack.empty();\n"
        ),
        random_case=case,
        edge_cases=(("",), (")(",), ("(",), (f"({pairs[-2]}{pairs[-1]})",)),
    )


def run_length(rng: random.Random) -> Problem:
    """Run-length encoding in one of three notations."""
    style = rng.choice(["letter_count", "count_letter", "omit_one"])
    example, notation = {
        "letter_count": ("`aaabcc` -> `a3b1c2`", "each run as its letter followed by its length"),
        "count_letter": ("`aaabcc` -> `3a1b2c`", "each run as its length followed by its letter"),
        "omit_one": (
            "`aaabcc` -> `a3bc2`",
            "each run as its letter followed by its length, the length omitted when it is 1",
        ),
    }[style]

    def piece(letter: str, count: int) -> str:
        if style == "count_letter":
            return f"{count}{letter}"
        return letter if style == "omit_one" and count == 1 else f"{letter}{count}"

    def solve(s: str) -> str:
        out, i = [], 0
        while i < len(s):
            j = i
            while j < len(s) and s[j] == s[i]:
                j += 1
            out.append(piece(s[i], j - i))
            i = j
        return "".join(out)

    def case(rng: random.Random, size: Size) -> Args:
        letters = rng.sample(LOWER, rng.randint(2, 5))
        runs = rng.randint(1, size.pick(5, 12, 60))
        longest = size.pick(4, 12, 30)
        return ("".join(rng.choice(letters) * rng.randint(1, longest) for _ in range(runs)),)

    python_piece, cpp_piece = {
        "letter_count": ("s[i] + str(j - i)", "string(1, s[i]) + to_string(j - i)"),
        "count_letter": ("str(j - i) + s[i]", "to_string(j - i) + s[i]"),
        "omit_one": (
            "s[i] + (str(j - i) if j - i > 1 else '')",
            'string(1, s[i]) + (j - i > 1 ? to_string(j - i) : "")',
        ),
    }[style]
    return Problem(
        name=rng.choice(["run_length_encode", "compress_runs"]),
        params=(S,),
        returns="str",
        task=f"the run-length encoding of `s`: {notation}, for example {example}",
        rules="`s` holds lowercase letters only. A run is a maximal block of equal letters; runs "
        "may be longer than 9.",
        solve=solve,
        python=(
            "    out, i = [], 0\n"
            "    while i < len(s):\n"
            "        j = i\n"
            "        while j < len(s) and s[j] == s[i]:\n"
            "            j += 1\n"
            f"        out.append({python_piece})\n"
            "        i = j\n"
            '    return "".join(out)\n'
        ),
        cpp=(
            "    string out;\n"
            "    size_t i = 0;\n"
            "    while (i < s.size()) {\n"
            "        size_t j = i;\n"
            "        while (j < s.size() && s[j] == s[i]) ++j;\n"
            f"        out += {cpp_piece};\n"
            "        i = j;\n"
            "    }\n"
            "    return out;\n"
        ),
        random_case=case,
        edge_cases=(("",), ("q",), ("z" * 12,), ("abab",)),
    )


def anagram_groups(rng: random.Random) -> Problem:
    """Group words that are anagrams of each other, in order of first appearance."""
    only_shared = rng.random() < 0.5

    def solve(words: list[str]) -> list[list[str]]:
        groups: dict[str, list[str]] = {}
        for w in words:
            groups.setdefault("".join(sorted(w)), []).append(w)
        return [g for g in groups.values() if len(g) > 1 or not only_shared]

    def case(rng: random.Random, size: Size) -> Args:
        bases = [
            word(rng, "abcdeilnorst", 2, 6) for _ in range(rng.randint(1, size.pick(3, 6, 30)))
        ]
        words = []
        for _ in range(rng.randint(1, size.pick(6, 15, 120))):
            letters = list(rng.choice(bases))
            rng.shuffle(letters)
            words.append("".join(letters))
        return (words,)

    keep = (
        "Only groups of at least two words are returned (a repeated word counts twice)."
        if only_shared
        else "Every word is in exactly one group; a word without anagrams is a group by itself."
    )
    python_filter = " if len(group) > 1" if only_shared else ""
    cpp_filter = "if (g.size() > 1) " if only_shared else ""
    return Problem(
        name=rng.choice(["group_anagrams", "anagram_groups"]),
        params=(Param("words", "strs", "a list of lowercase words `words`"),),
        returns="groups",
        task="the groups of words of `words` that are anagrams of each other",
        rules="Two words are anagrams when they have the same letters with the same counts. "
        f"{keep} Groups are ordered by the position of their first word in `words`, and the "
        "words in a group keep their order in `words` (repeated words are kept).",
        solve=solve,
        python=(
            "    groups = {}\n"
            "    for word in words:\n"
            '        groups.setdefault("".join(sorted(word)), []).append(word)\n'
            f"    return [group for group in groups.values(){python_filter}]\n"
        ),
        cpp=(
            "    map<string, size_t> index;\n"
            "    vector<vector<string>> groups;\n"
            "    for (const auto& w : words) {\n"
            "        string key = w;\n"
            "        sort(key.begin(), key.end());\n"
            "        auto it = index.find(key);\n"
            "        if (it == index.end()) {\n"
            "            index[key] = groups.size();\n"
            "            groups.push_back({w});\n"
            "        } else {\n"
            "            groups[it->second].push_back(w);\n"
            "        }\n"
            "    }\n"
            "    vector<vector<string>> out;\n"
            f"    for (auto& g : groups) {cpp_filter}out.push_back(g);\n"
            "    return out;\n"
        ),
        random_case=case,
        edge_cases=(
            ([],),
            (["solo"],),
            (["listen", "silent", "enlist", "google"],),
            (["ab", "ba", "ab", "c"],),
        ),
    )


def is_rotation(rng: random.Random) -> Problem:
    """Whether one string is a rotation of another, exactly or ignoring case."""
    ignore_case = rng.random() < 0.5

    def solve(a: str, b: str) -> bool:
        if ignore_case:
            a, b = a.lower(), b.lower()
        return len(a) == len(b) and b in a + a

    def case(rng: random.Random, size: Size) -> Args:
        # Few distinct letters, so that wrong answers are near misses.
        a = word(rng, rng.choice(["ab", "abc", "xyz"]), 1, size.pick(6, 15, 200))
        shift = rng.randrange(len(a))
        b = a[shift:] + a[:shift]
        if rng.random() < 0.5:
            b = "".join(rng.sample(b, len(b))) if rng.random() < 0.5 else b[:-1] + "z"
        if ignore_case:
            b = "".join(ch.upper() if rng.random() < 0.3 else ch for ch in b)
        return a, b

    case_rule = (
        "Letters compare ignoring case (`A` equals `a`)."
        if ignore_case
        else "Letters compare exactly (`A` differs from `a`)."
    )
    lower = "    a, b = a.lower(), b.lower()\n" if ignore_case else ""
    cpp_lower = (
        "    for (auto& ch : x) ch = (char)tolower((unsigned char)ch);\n"
        "    for (auto& ch : y) ch = (char)tolower((unsigned char)ch);\n"
        if ignore_case
        else ""
    )
    return Problem(
        name=rng.choice(["is_rotation", "is_rotation_of"]),
        params=(Param("a", "str", "a string `a`"), Param("b", "str", "a string `b`")),
        returns="bool",
        task="whether `b` is a rotation of `a`, that is whether `b` equals `a[k:] + a[:k]` for "
        "some `k`",
        rules=f"Either string may be empty; the empty string is a rotation of itself. {case_rule}",
        solve=solve,
        python=f"{lower}    return len(a) == len(b) and b in a + a\n",
        cpp=(
            "    string x = a, y = b;\n"
            f"{cpp_lower}"
            "    return x.size() == y.size() && (x + x).find(y) != string::npos;\n"
        ),
        random_case=case,
        edge_cases=(("", ""), ("a", ""), ("ab", "ba"), ("abc", "acb")),
    )
