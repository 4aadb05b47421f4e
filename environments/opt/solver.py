"""OR-Tools CP-SAT, set up for reproducible exact references."""

from __future__ import annotations

from ortools.sat.python import cp_model

# One search worker and deterministic time: the same instance gives the same solution and the
# same verdict on every machine, however fast.
_WORKERS = 1
_SEED = 7


def solve(model: cp_model.CpModel, budget: float) -> tuple[cp_model.CpSolver, bool]:
    """Solve ``model`` within ``budget`` deterministic seconds; the solver (to read values from)
    and whether the result is proven optimal. Raises RuntimeError when no solution was found."""
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = _WORKERS
    solver.parameters.random_seed = _SEED
    solver.parameters.max_deterministic_time = budget
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise RuntimeError(f"CP-SAT found no solution ({solver.status_name(status)})")
    return solver, status == cp_model.OPTIMAL
