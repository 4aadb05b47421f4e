"""Drop-in reward adapters for the trainers people already use (TRL, verl; OpenRLHF speaks
HTTP itself: the server's ``/openrlhf/{verifier}/get_reward``). HTTP only: importable without
the server's dependencies and without the trainers themselves."""
