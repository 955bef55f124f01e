"""Contrast sets in the formats ML tools load: Parquet, a Hugging Face dataset, flat JSONL.

`contrast_sets.jsonl` is one line per original with its perturbations nested, the shape the
verifier and the evaluator want. Training and analysis code wants the other shape: one row per
perturbation, with the original beside it, that `pandas.read_parquet`, `datasets.load_dataset`
or `polars` open without a line of glue. This stage reads a `generate` output directory (or any
contrast file) and writes that table, with a dataset card.
"""
