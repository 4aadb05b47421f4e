"""The ``tamarin`` family: proof search in the Tamarin security-protocol prover."""

from environments.tamarin.family import TamarinProofEnv

ENVIRONMENTS = (TamarinProofEnv(),)
