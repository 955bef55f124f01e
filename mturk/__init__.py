"""Crowd verification on Amazon Mechanical Turk: export blinded HITs, preview them, score results.

The library API is what the CLI (`contrastgen mturk ...`) calls:

- `export_hits(records, *, images_base_url, sample, seed, assignments, items_per_hit, reward,
  gold=None, out_dir)` samples images stratified by template and writes the upload files and
  the private manifest;
- `render_preview(hit_dir)` writes an offline preview page of the first HITs;
- `ingest_results(manifest, results_csv_paths, out=...)` scores a results CSV and returns the
  report as a dict.
"""

from __future__ import annotations

import importlib
from typing import Any

# Lazy exports: ingest pulls in pandas, crowd-kit, scikit-learn and statsmodels, which take
# seconds to import and are not needed to export or preview a batch.
_EXPORTS = {
    "ExportSummary": "contrastgen.mturk.export",
    "export_hits": "contrastgen.mturk.export",
    "ingest_results": "contrastgen.mturk.ingest",
    "load_manifest": "contrastgen.mturk.manifest",
    "GoldItem": "contrastgen.mturk.inputs",
    "load_contrast_sets": "contrastgen.mturk.inputs",
    "load_gold": "contrastgen.mturk.inputs",
    "render_preview": "contrastgen.mturk.preview",
    "simulate_results": "contrastgen.mturk.simulate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
