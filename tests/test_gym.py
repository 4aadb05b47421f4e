"""The Gymnasium environments against a real server: the env checker, episodes, branching,
registration and the batched vector environment."""

from __future__ import annotations

import string
import subprocess
import sys
import warnings
from collections.abc import Iterator

import gymnasium as gym
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

import clients.gym
from clients.errors import ItemFailedError
from clients.gym import EnvServerEnv, EnvServerVectorEnv
from clients.http import EnvServerClient
from clients.spaces import UnicodeText
from clients.transitions import ensure_ok
from envserver.wire import ResetResponse, StepResponse
from tests.math_support import expert_answer
from tests.server import ROOT

WRONG = "The answer is $\\boxed{-987654321}$."
MATH = "envserver/Math-v0"


@pytest.fixture
def env(base_url: str) -> Iterator[EnvServerEnv]:
    made = gym.make(MATH, base_url=base_url, options={"difficulty": "easy"})
    yield made.unwrapped
    made.close()


# --- the single environment ---------------------------------------------------------------------


def test_check_env_passes_without_warnings(base_url: str) -> None:
    made = gym.make(MATH, base_url=base_url)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(made.unwrapped)
        gym_warnings = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        assert gym_warnings == []
    finally:
        made.close()


@pytest.mark.parametrize(
    ("gym_id", "options"),
    [
        ("envserver/TamarinProof-v0", {"theory": "Tutorial", "lemma": "Client_auth"}),
        ("envserver/WebShop-v0", {"split": "test"}),
        ("envserver/NL2SVA-Human-v0", {}),
        ("envserver/NL2SVA-Machine-v0", {}),
        ("envserver/SVAGenerated-v0", {"level": "hard"}),
        ("envserver/SBOLDesign-v0", {"circuit": "toggle_switch", "max_attempts": 2}),
        ("envserver/ALFWorld-v0", {"difficulty": "easy"}),
    ],
)
def test_check_env_passes_for_every_family(
    base_url: str, gym_id: str, options: dict[str, object]
) -> None:
    made = gym.make(gym_id, base_url=base_url, options=options)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(made.unwrapped)
        assert [str(w.message) for w in caught if issubclass(w.category, UserWarning)] == []
    finally:
        made.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_listed_tamarin_action_can_be_stepped(base_url: str, seed: int) -> None:
    """A Gym agent sampling from ``info["valid_actions"]`` never gets ItemFailedError: on the
    replay backend only methods the recording applied at the node are listed (issue 24: seeds
    1-3 listed two at the root, one of them never applied in the recording)."""
    made = gym.make("envserver/TamarinProof-v0", base_url=base_url)
    env = made.unwrapped
    assert isinstance(env, EnvServerEnv)
    try:
        _, info = env.reset(seed=seed)
        stepped = 0
        for _depth in range(6):
            actions = info["valid_actions"]
            if not actions:
                break
            methods = info["methods"]
            here = env.state_token
            assert here is not None
            for action in [*actions[1:], actions[0]]:  # each from the same token; the first last
                env.state_token = here
                _, _, terminated, truncated, info = env.step(action)
                stepped += 1
            assert set(actions) == {str(m["rank"]) for m in methods if m["steppable"]}
            if terminated or truncated:
                break
        assert stepped >= 1
    finally:
        made.close()


def test_spaces_hold_real_text(env: EnvServerEnv) -> None:
    prompt, _ = env.reset(seed=1)
    assert env.observation_space.contains(prompt)
    # Tabs, newlines, no-break space, soft hyphen, CJK, a ZWJ emoji, LaTeX, a byte-order mark.
    real = (
        "Résumé:\tx² + 1 = 0 → x = ±i\u00a0(1\u00ad2)\n数学 👩\u200d🔬 \\boxed{\\frac{1}{2}}\ufeff"
    )
    for space in (env.observation_space, env.action_space):
        assert space.contains(real)
        assert space.contains("")  # a finished episode observes the empty string
        assert not space.contains("\ud800")  # a lone surrogate cannot travel as UTF-8 JSON
        assert not space.contains(b"bytes")
    assert not UnicodeText(3).contains("four")
    # The reason for the subclass: a printable-only Text rejects ordinary prompt characters.
    assert not spaces.Text(100, charset=string.printable).contains(real)
    assert UnicodeText(5) == UnicodeText(5) != UnicodeText(6)
    assert UnicodeText(5) != spaces.Text(5, min_length=0, charset=string.printable)


def test_episode_with_the_correct_answer(env: EnvServerEnv) -> None:
    observation, info = env.reset(seed=101)
    assert "\\boxed" in observation
    task_id = info["task_id"]
    assert task_id == "math@1/101?difficulty=easy" == env.task_id
    assert info["metadata"]["difficulty"] == "easy"
    observation, reward, terminated, truncated, info = env.step(expert_answer(task_id))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert (info["status"], info["components"]) == ("ok", {"correct": 1.0})
    assert observation == ""
    with pytest.raises(gym.error.ResetNeeded):
        env.step("again")


def test_two_attempts_wrong_then_right(env: EnvServerEnv) -> None:
    _, info = env.reset(seed=102, options={"max_attempts": 2})
    feedback, reward, terminated, _, step_info = env.step(WRONG)
    assert (reward, terminated) == (0.0, False)
    assert "Attempt 1 of 2" in feedback
    assert (step_info["attempt"], step_info["status"]) == (1, "ok")
    _, reward, terminated, _, step_info = env.step(expert_answer(info["task_id"]))
    assert (reward, terminated, step_info["attempt"]) == (1.0, True, 2)


def test_branching_from_an_earlier_state_token(env: EnvServerEnv) -> None:
    _, info = env.reset(seed=103, options={"max_attempts": 3})
    answer = expert_answer(info["task_id"])
    root = env.state_token
    assert root is not None
    env.step(WRONG)
    after_wrong = env.state_token
    _, reward, terminated, _, step_info = env.step(answer)
    assert (reward, terminated, step_info["attempt"]) == (1.0, True, 2)
    # Back to the root: the same answer now solves it on the first attempt.
    env.state_token = root
    _, reward, terminated, _, step_info = env.step(answer)
    assert (reward, terminated, step_info["attempt"]) == (1.0, True, 1)
    # And the other branch continues where it was.
    env.state_token = str(after_wrong)
    _, reward, _, _, step_info = env.step(WRONG)
    assert (reward, step_info["attempt"]) == (0.0, 2)


def test_seeding_repeats_the_sequence_of_tasks(env: EnvServerEnv) -> None:
    def tasks() -> list[str]:
        ids = [env.reset(seed=7)[1]["task_id"]]
        ids += [env.reset()[1]["task_id"] for _ in range(3)]
        return ids

    first = tasks()
    assert first == tasks()
    assert len(set(first)) == 4


def test_reset_by_task_id(env: EnvServerEnv) -> None:
    observation, info = env.reset(seed=104)
    replay, replay_info = env.reset(options={"task_id": info["task_id"]})
    assert (replay, replay_info["task_id"]) == (observation, info["task_id"])
    with pytest.raises(ValueError, match="task id"):
        env.reset(seed=1, options={"task_id": info["task_id"]})


def test_infrastructure_failures_raise(env: EnvServerEnv) -> None:
    # The server side of a timeout is covered by the executor tests; here, what the Gym layer
    # makes of such an answer.
    with pytest.raises(ItemFailedError) as caught:
        ensure_ok(StepResponse(status="timeout", detail="exceeded the 10 s limit", state="t"))
    assert (caught.value.item_status, caught.value.index) == ("timeout", None)
    with pytest.raises(ItemFailedError, match="item 3: error"):
        ensure_ok(ResetResponse(status="error", detail="worker died"), index=3)
    ensure_ok(StepResponse(status="invalid", reward=0.0, state="t"))  # a real zero passes


def test_shared_client_is_left_open(base_url: str) -> None:
    with EnvServerClient(base_url) as client:
        first = EnvServerEnv("math", client=client)
        second = EnvServerEnv("math", client=client)
        first.reset(seed=1)
        first.close()
        assert second.reset(seed=1)[1]["task_id"] == "math@1/1"
        second.close()


# --- registration -------------------------------------------------------------------------------


def test_registered_ids(base_url: str) -> None:
    assert {MATH, clients.gym.REMOTE_ID} <= set(gym.registry)
    spec = gym.spec(MATH)
    assert spec.vector_entry_point == "clients.vector:EnvServerVectorEnv"
    remote = gym.make(clients.gym.REMOTE_ID, env_id="math", base_url=base_url)
    try:
        _, info = remote.reset(seed=5, options={"difficulty": "hard"})
        assert info["task_id"] == "math@1/5?difficulty=hard"
    finally:
        remote.close()
    clients.gym.register()  # registering again leaves the ids alone
    assert gym.spec(MATH) is spec


def test_make_with_module_prefix_imports_the_client(base_url: str) -> None:
    program = (
        "import gymnasium as gym; "
        f"env = gym.make('clients.gym:{MATH}', base_url={base_url!r}); "
        "print(env.reset(seed=9)[1]['task_id']); env.close()"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "math@1/9"


# --- the vector environment -----------------------------------------------------------------------


def make_vec(base_url: str, num_envs: int = 4, **options: object) -> EnvServerVectorEnv:
    envs = gym.make_vec(
        MATH,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        base_url=base_url,
        options={"difficulty": "easy", **options},
    )
    assert isinstance(envs, EnvServerVectorEnv)
    return envs


def test_vector_reset_matches_single_envs(base_url: str) -> None:
    envs = make_vec(base_url)
    single = EnvServerEnv("math", base_url=base_url, options={"difficulty": "easy"})
    try:
        observations, infos = envs.reset(seed=200)
        assert isinstance(observations, tuple)
        assert all(isinstance(o, str) for o in observations)
        assert envs.observation_space.contains(observations)
        assert envs.action_space.contains((WRONG, "é", "", "\n"))
        assert isinstance(envs.single_observation_space, UnicodeText)
        expected = [single.reset(seed=200 + i) for i in range(4)]
        assert list(observations) == [obs for obs, _ in expected]
        assert list(infos["task_id"]) == [info["task_id"] for _, info in expected]
        assert envs.task_ids == tuple(infos["task_id"])
        assert all(token is not None for token in envs.state_tokens)
    finally:
        envs.close()
        single.close()


def test_vector_step_and_next_step_autoreset(base_url: str) -> None:
    envs = make_vec(base_url)
    try:
        _, infos = envs.reset(seed=300)
        task_ids = list(infos["task_id"])
        actions = [expert_answer(task_ids[0]), WRONG, expert_answer(task_ids[2]), "no answer"]
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        assert rewards.tolist() == [1.0, 0.0, 1.0, 0.0]
        assert terminated.tolist() == [True] * 4
        assert truncated.tolist() == [False] * 4
        assert list(infos["status"]) == ["ok", "ok", "ok", "invalid"]
        assert observations == ("",) * 4

        # Next step: every sub-environment restarts; the actions are ignored.
        observations, rewards, terminated, truncated, infos = envs.step(["ignored"] * 4)
        assert rewards.tolist() == [0.0] * 4
        assert not terminated.any() and not truncated.any()
        assert all("\\boxed" in o for o in observations)
        new_ids = list(infos["task_id"])
        assert set(new_ids).isdisjoint(task_ids)

        # The autoreset seeds come from the seeded generators: the same run repeats.
        envs.reset(seed=300)
        envs.step(actions)
        assert list(envs.step(["ignored"] * 4)[4]["task_id"]) == new_ids
    finally:
        envs.close()


def test_vector_mixed_autoreset_and_steps(base_url: str) -> None:
    envs = make_vec(base_url, num_envs=3, max_attempts=2)
    try:
        _, infos = envs.reset(seed=400)
        ids = list(infos["task_id"])
        _, rewards, terminated, _, _ = envs.step([expert_answer(ids[0]), WRONG, WRONG])
        assert rewards.tolist() == [1.0, 0.0, 0.0]
        assert terminated.tolist() == [True, False, False]
        # Sub-environment 0 restarts while 1 and 2 take their second attempt.
        observations, rewards, terminated, _, infos = envs.step(
            ["ignored", expert_answer(ids[1]), WRONG]
        )
        assert rewards.tolist() == [0.0, 1.0, 0.0]
        assert terminated.tolist() == [False, True, True]
        assert "\\boxed" in observations[0]
        assert infos["_task_id"].tolist() == [True, False, False]
        assert infos["attempt"][1:].tolist() == [2, 2]
        assert envs.task_ids[1:] == tuple(ids[1:])
    finally:
        envs.close()


def test_vector_async_protocol(base_url: str) -> None:
    envs = make_vec(base_url, num_envs=2)
    try:
        with pytest.raises(gym.error.ResetNeeded):
            envs.step(["a", "b"])
        envs.reset_async(seed=500)
        with pytest.raises(gym.error.AlreadyPendingCallError):
            envs.step_async(["a", "b"])
        with pytest.raises(gym.error.NoAsyncCallError):
            envs.step_wait()
        observations, _ = envs.reset_wait(timeout=30)
        assert len(observations) == 2
        envs.step_async([WRONG, WRONG])
        # ... a trainer would do other work here while the request is in flight ...
        _, rewards, terminated, _, _ = envs.step_wait(timeout=30)
        assert rewards.tolist() == [0.0, 0.0]
        assert terminated.all()
        with pytest.raises(ValueError, match="3 actions for 2"):
            envs.step_async(["a", "b", "c"])
    finally:
        envs.close()
    assert envs.closed
