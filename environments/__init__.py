"""Environment families: one subpackage per family.

Every family package exports ``FAMILY``, its declaration (``environments.family.Family``),
declared as an entry point of the group ``envserver.families`` in ``pyproject.toml``; the server
loads what it declares at start-up. A family whose optional dependencies are missing is listed as
disabled, with the reason and the fix, instead of breaking start-up. Environments never import
the server.
"""
