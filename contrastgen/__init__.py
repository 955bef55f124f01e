"""contrastgen: contrast sets, OOD splits and shortcut metrics for VQA, proven from scene graphs."""

__version__ = "0.1.0"
