"""Environment families: one subpackage per family.

Every subpackage exposes ``ENVIRONMENTS``, a sequence of objects satisfying
``environments.base.Environment``; the server discovers them at start-up. A family whose optional
dependencies are missing fails to import and is listed as disabled, with the reason, instead of
breaking start-up. Environments never import the server.
"""
