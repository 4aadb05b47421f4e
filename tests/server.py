"""The live-server helpers of the tests: ``envserver.testing``'s, and the repository's root."""

from __future__ import annotations

from pathlib import Path

from envserver.testing import LiveServer, free_port

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["ROOT", "LiveServer", "free_port"]
