"""Pure scoring: (response, reference, options) -> Score.

A family's declaration (``environments.family``) lists the verifiers it serves; each is served
under its name by ``POST /v1/verify``. Verifiers are deterministic and do no I/O except through
``sandbox``; they never import an environment or the server.
"""
