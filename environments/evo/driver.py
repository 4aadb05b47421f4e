"""The program that runs *inside* the sandbox next to a submitted environment: it loads
``environment.py``, makes the calls it is given on stdin and prints their results as JSON.

It is source text for the sandbox (``DRIVER``), never executed in the server. Its output is as
untrusted as the environment itself: the server checks every value it reads back.
"""

DRIVER = r"""
import json, signal, sys, time

real_stdout = sys.stdout
sys.stdout = sys.stderr  # the environment's own prints must not garble the reply
# A 10,000-digit answer is a wrong answer, not a crash of int(): the CPU budget bounds the cost.
sys.set_int_max_str_digits(0)
request = json.loads(sys.stdin.read())
namespace = {"__name__": "environment"}
budget = request["cpu_s"]
# The run's share of an admission's CPU budget (None outside one): the run stops making calls
# once this process has used it, and says so ("over"), so an admission spends what it may and
# no more, to the millisecond rather than to the second of the run's own CPU limit.
share = request.get("run_cpu_s")


class CallTimeout(BaseException):
    # Not an Exception: a submitted "except Exception" does not swallow it. One that catches
    # BaseException and goes on meets the run's own CPU limit.
    pass


def over_budget(signum, frame):
    raise CallTimeout(f"timeout: the call used more than {budget:g} s of CPU time")


signal.signal(signal.SIGPROF, over_budget)


def timed(op, args, seconds):
    # ITIMER_PROF counts this process's CPU time, not the wall clock: a busy machine slows a
    # call but does not make it run out. One shot, disarmed after the call.
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return {"value": OPS[op](*args)}
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


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


def symbolic(instance, reference, shape, seconds, longest, wanted):
    # CrossHair runs score() on a symbolic string (the whole response, or the text inside one
    # <answer> tag) and returns up to `wanted` responses it found that score above 0 and are not
    # the reference itself, within `seconds` of CPU (CrossHair's own deadlines are CPU time).
    try:
        import inspect
        from crosshair import core_and_libs  # registers CrossHair's models of the library
        from crosshair.copyext import CopyMode, deepcopyext
        from crosshair.core import explore_paths
        from crosshair.options import DEFAULT_OPTIONS, AnalysisOptionSet
        from crosshair.statespace import RootNode
        from crosshair.tracers import NoTracing, ResumedTracing
    except ImportError as exc:
        return {"unavailable": f"{type(exc).__name__}: {exc}"}
    del core_and_libs
    scorer = namespace["score"]

    class Dull(Exception):
        pass

    def response_of(text):
        return "<answer>" + text + "</answer>" if shape == "tagged" else text

    def pays(text):
        if len(text) > longest:
            raise Dull
        response = response_of(text)
        if response == reference:
            raise Dull
        value = scorer(instance, response)
        if value is None or not value > 0:
            raise Dull

    found = []

    def complete(space, pre_args, post_args, ret, exc, stack):
        with NoTracing():
            if exc is not None:
                return False
        with ResumedTracing():
            text = deepcopyext(pre_args, CopyMode.REALIZE, {}).arguments["text"]
        with NoTracing():
            found.append(response_of(str(text)))
            return len(found) >= wanted

    options = DEFAULT_OPTIONS.overlay(
        AnalysisOptionSet(per_condition_timeout=seconds, per_path_timeout=seconds / 4)
    )
    # The signature is built, not read: the sandbox may compile this driver with postponed
    # annotations, and CrossHair reads the type of the symbolic argument from it.
    text = inspect.Parameter("text", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)
    call = lambda bound: pays(*bound.args, **bound.kwargs)  # noqa: E731
    explore_paths(call, inspect.Signature([text]), options, RootNode(), complete)
    return {"found": found}


OPS = {"task": task, "score": score, "symbolic": symbolic}
reply = {"load": None, "results": []}
try:
    exec(compile(open("environment.py").read(), "environment.py", "exec"), namespace)
except BaseException as exc:
    reply["load"] = failure(exc)
else:
    for op, args in request["calls"]:
        started, cpu = time.perf_counter(), time.process_time()
        left = budget if share is None else min(budget, share - cpu)
        if left <= 0:
            reply["over"] = True
            break
        try:
            result = timed(op, args, left)
        except CallTimeout as exc:
            if left < budget:  # stopped by the share, not by the call's own limit
                reply["over"] = True
                break
            result = failure(exc)
        except BaseException as exc:
            result = failure(exc)
        result["seconds"] = time.perf_counter() - started
        result["cpu_s"] = time.process_time() - cpu
        reply["results"].append(result)
sys.stdout = real_stdout
real_stdout.write(json.dumps(reply))
real_stdout.flush()
"""
