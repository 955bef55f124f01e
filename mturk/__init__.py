"""Crowd verification on Amazon Mechanical Turk: export blinded HITs, preview them, score results.

The library API is what the CLI (`contrastgen mturk ...`) and the HTTP service call:

- `export_hits(records, *, images_base_url, sample, seed, assignments, items_per_hit, reward,
  gold=None, out_dir)` samples images stratified by template and writes the upload files and
  the private manifest;
- `render_preview(hit_dir)` writes an offline preview page of the first HITs;
- `ingest_results(manifest, results_csv_paths, out=...)` scores a results CSV and returns the
  report as a dict.
"""

from contrastgen.mturk.export import ExportSummary, export_hits
from contrastgen.mturk.ingest import ingest_results, load_manifest
from contrastgen.mturk.inputs import GoldItem, load_contrast_sets, load_gold
from contrastgen.mturk.preview import render_preview

__all__ = [
    "ExportSummary",
    "GoldItem",
    "export_hits",
    "ingest_results",
    "load_contrast_sets",
    "load_gold",
    "load_manifest",
    "render_preview",
]
