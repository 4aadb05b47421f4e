"""envserver: a stateless reward service for RL with verifiable rewards.

Kept import-light: clients import ``envserver.wire`` without the server's dependencies.
"""

__version__ = "0.1.0"
