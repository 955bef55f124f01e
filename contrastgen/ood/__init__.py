"""Out-of-distribution splits and metrics: GQA-OOD and VQA-VS."""
