"""CLEVR and Super-CLEVR: reading questions back into programs, executing them on scenes, and
perturbing them into contrast sets (parameter edits, redundancy edits)."""
