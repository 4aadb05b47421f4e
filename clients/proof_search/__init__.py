"""Proof search over the service's expandable environments (``tamarin/proof``): MCTS over the
AND/OR proof tree and Tamarin's own greedy strategy, through the HTTP API only."""

from clients.proof_search.mcts import MCTSConfig, SearchResult, greedy, mcts, tamarin_prior

__all__ = ["MCTSConfig", "SearchResult", "greedy", "mcts", "tamarin_prior"]
