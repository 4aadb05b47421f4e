"""envserver."""
