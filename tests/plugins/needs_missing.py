"""A family whose optional dependency is not installed: discovery must disable it, not crash."""

import envserver_tests_missing_dependency  # type: ignore[import-not-found]  # noqa: F401
