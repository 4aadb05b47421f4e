"""A thin GRPO trainer that takes its rewards from the service (needs the ``train`` extra:
PyTorch, transformers, matplotlib). ``GRPOTrainer(TrainConfig(...)).train()`` or the
``envserver-train`` command."""
