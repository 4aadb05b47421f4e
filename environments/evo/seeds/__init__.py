"""The ten seed environments, written to the environment-as-code contract (see ../README.md).

They are data to the server: their source is read as text and runs in the sandbox like any
submission, never imported into the server.
"""

from pathlib import Path


def seed_sources() -> dict[str, str]:
    """Each seed's source by module name (``lis``, ``knapsack``...)."""
    here = Path(__file__).parent
    return {path.stem: path.read_text() for path in sorted(here.glob("[a-z]*.py"))}
