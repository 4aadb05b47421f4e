"""The program that runs *inside* the sandbox next to a submitted environment: it loads
``environment.py``, makes the calls it is given on stdin and prints their results as JSON.

It is source text for the sandbox (``DRIVER``), never executed in the server. Its output is as
untrusted as the environment itself: the server checks every value it reads back.
"""

DRIVER = r"""
import json, sys, time

real_stdout = sys.stdout
sys.stdout = sys.stderr  # the environment's own prints must not garble the reply
request = json.loads(sys.stdin.read())
namespace = {"__name__": "environment"}


def failure(exc):
    return {"error": f"{type(exc).__name__}: {exc}"[:500]}


def as_json(value):
    text = json.dumps(value, sort_keys=True, allow_nan=False)
    if json.loads(text) != value:
        raise TypeError("the value does not survive a JSON round trip (tuples, non-str keys?)")
    return json.loads(text)


def check_score(value):
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise TypeError(f"score returned {type(value).__name__}, not a float or None")
    return value


def task(seed, difficulty):
    instance = as_json(namespace["generate"](seed, difficulty))
    again = as_json(namespace["generate"](seed, difficulty))
    text = namespace["prompt"](instance)
    answer = namespace["reference"](instance)
    if not isinstance(text, str) or not isinstance(answer, str):
        raise TypeError("prompt and reference must return str")
    return {"instance": instance, "repeat_same": again == instance, "prompt": text,
            "reference": answer}


def score(instance, response):
    return check_score(namespace["score"](instance, response))


OPS = {"task": task, "score": score}
reply = {"load": None, "results": []}
try:
    exec(compile(open("environment.py").read(), "environment.py", "exec"), namespace)
except BaseException as exc:
    reply["load"] = failure(exc)
else:
    for op, args in request["calls"]:
        started = time.perf_counter()
        try:
            result = {"value": OPS[op](*args)}
        except BaseException as exc:
            result = failure(exc)
        result["seconds"] = time.perf_counter() - started
        reply["results"].append(result)
sys.stdout = real_stdout
real_stdout.write(json.dumps(reply))
real_stdout.flush()
"""
