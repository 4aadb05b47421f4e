"""Pure scoring: (response, reference, options) -> Score.

Every module (or subpackage) here that defines a module-level ``VERIFIER`` is served under that
verifier's name by ``POST /v1/verify``. Verifiers are deterministic and do no I/O except through
``sandbox``; they never import an environment or the server.
"""
