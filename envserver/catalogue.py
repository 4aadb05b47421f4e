"""The catalogue: what ``GET /v1/envs`` publishes, built once from the registry."""

from __future__ import annotations

from environments.base import Environment
from envserver.registry import Registry
from envserver.wire import Catalogue, DisabledFamily, EnvInfo, VerifierInfo
from verifiers.base import Verifier


def env_info(env: Environment, registry: Registry) -> EnvInfo:
    """One environment's public spec, options as JSON Schema; its family is the declaration's
    whose namespace holds its id."""
    spec = env.spec
    return EnvInfo(
        id=spec.id,
        version=spec.version,
        family=registry.family_of(spec.id),
        description=spec.description,
        kind=spec.kind,
        action_format=spec.action_format,
        observation_format=spec.observation_format,
        options_schema=spec.options_model.model_json_schema(),
        verifier=spec.verifier,
        timeout_s=spec.timeout_s,
        max_episode_steps=spec.max_episode_steps,
    )


def verifier_info(verifier: Verifier, registry: Registry) -> VerifierInfo:
    """One verifier's public spec, options as JSON Schema, and the family that declares it."""
    return VerifierInfo(
        name=verifier.name,
        version=verifier.version,
        family=registry.family_of(verifier.name),
        description=verifier.description,
        options_schema=verifier.options_model.model_json_schema(),
        timeout_s=verifier.timeout_s,
        components=list(verifier.components),
        metrics=list(verifier.metrics),
    )


def build_catalogue(registry: Registry) -> Catalogue:
    """Every environment and verifier, and what is disabled, why and how to enable it."""
    return Catalogue(
        envs=[env_info(env, registry) for env in registry.envs.values()],
        verifiers=[verifier_info(v, registry) for v in registry.verifiers.values()],
        disabled=[
            DisabledFamily(name=str(withheld), reason=why.reason, fix=why.fix)
            for withheld, why in registry.disabled.items()
        ],
    )


def served_now(catalogue: Catalogue, registry: Registry) -> Catalogue:
    """``catalogue`` with the environments the families' dynamic sources serve now (those a
    family admits while the server runs): what ``GET /v1/envs``, the playground's index and the
    health probes count alike."""
    dynamic = registry.dynamic_envs()
    if not dynamic:
        return catalogue
    served = [env_info(env, registry) for env in dynamic]
    return catalogue.model_copy(update={"envs": catalogue.envs + served})
