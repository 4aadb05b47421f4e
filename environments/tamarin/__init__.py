"""The ``tamarin`` family: proof search in the Tamarin security-protocol prover."""

from environments.tamarin.env import TamarinProofEnv

ENVIRONMENTS = (TamarinProofEnv(),)
