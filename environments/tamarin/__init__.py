"""The ``tamarin`` family: proof search in the Tamarin security-protocol prover."""

from pathlib import Path

from environments.family import Contents, EnvironmentId, Family, VerifierName, Withheld


def _contents() -> Contents:
    from environments.renderer import ListedActions
    from environments.tamarin.family import TamarinProofEnv
    from environments.tamarin.provers import unavailable
    from environments.tamarin.search import SEARCH
    from verifiers.base import Unavailable
    from verifiers.tamarin import INSTALL_FIX, VERIFIER
    from verifiers.tamarin.prover import locate_prover

    env = TamarinProofEnv()
    withheld: dict[Withheld, Unavailable] = {}
    if (why := unavailable()) is not None:
        withheld[EnvironmentId(env.spec.id)] = why
    if locate_prover() is None:  # a look on PATH, not a run (this may be the fork server)
        withheld[VerifierName(VERIFIER.name)] = Unavailable(
            "no tamarin-prover binary on this server (the check replays the proof in it)",
            INSTALL_FIX,
        )
    return Contents(
        environments=(env,),
        verifiers=(VERIFIER,),
        # The playground offers the proof methods a step can take as buttons.
        renderers={env.spec.id: ListedActions(str(env.spec.actions_key))},
        unavailable=withheld,
        search=SEARCH,
    )


FAMILY = Family(
    name="tamarin",
    load=_contents,
    suite=Path(__file__).with_name("redteam.toml"),
    tools="environments.tamarin.cli",
)
