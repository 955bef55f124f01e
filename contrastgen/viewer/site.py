"""The viewer as a folder: the page (`index.html`, `viewer.js`, `viewer.css`, shipped in the
package) and the data files `bundle` makes, written atomically.

Why a folder of static files: the same site is what `contrastgen view` serves, what `contrastgen
serve` mounts at /viewer and what `--static` writes to share; no server logic, nothing fetched
from a CDN, and it opens from disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from contrastgen.datasets.clevr import is_clevr_scenes, load_scenes
from contrastgen.datasets.gqa import load_scene_graphs
from contrastgen.errors import InputError
from contrastgen.evaluation.predictions import load_predictions
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps, read_jsonl
from contrastgen.records import load_contrast_sets
from contrastgen.resources import package_resource
from contrastgen.terminal.progress import progress as progress_bar
from contrastgen.viewer.bundle import ViewerInputs, bundle

ASSETS = ("index.html", "viewer.js", "viewer.css")
IMAGE_SUFFIXES = (".jpg", ".png", ".jpeg")


def _js(call: str, *args: Any) -> bytes:
    """`cgData(...)` with JSON arguments: a data file a page opened from disk can load."""
    return f"cgData({call!r}".encode() + b"".join(b"," + dumps(a) for a in args) + b");\n"


def write_site(inputs: ViewerInputs, site: str | os.PathLike[str], *, progress: bool = False) -> Path:
    """Write the viewer of `inputs` to `site` (replaced atomically); returns its index.html.
    `progress`: a bar on a terminal, per contrast set."""
    with progress_bar("building the viewer", len(inputs.records), enabled=progress) as advance:
        manifest, rows, pages = bundle(inputs, advance)
    with atomic_dir(site) as tmp:
        for name in ASSETS:
            (tmp / name).write_bytes(package_resource("contrastgen.viewer", "static", name).read_bytes())
        data = tmp / "data"
        data.mkdir()
        (data / "manifest.js").write_bytes(_js("manifest", manifest))
        (data / "index.js").write_bytes(_js("index", rows))
        for page in pages:
            (data / f"page-{page['page']:05d}.js").write_bytes(_js("page", page["page"], page))
    return Path(site) / "index.html"


def read_inputs(out_dir: str | os.PathLike[str], *, scene_graphs: str | os.PathLike[str] | None = None,
                predictions: dict[str, str | os.PathLike[str]] | None = None,
                review: str | os.PathLike[str] | None = None, images: str | None = None,
                images_dir: str | os.PathLike[str] | None = None) -> ViewerInputs:
    """A generation's output directory (its contrast_sets.jsonl) and what may go beside it: the
    scene graphs (boxes to draw), models' predictions by name, an `mturk ingest` review list."""
    path = Path(out_dir)
    records = [s.record for s in load_contrast_sets(path)]  # validated: errors name the file and line
    graphs: dict[str, dict[str, Any]] = {}
    if scene_graphs is not None:
        if is_clevr_scenes(scene_graphs):  # a CLEVR scene file, {"scenes": [...]} or a folder of them
            loaded: Any = load_scenes(scene_graphs)
        else:  # checked as `generate` checks them: the viewer draws what the generator read
            loaded = load_scene_graphs(scene_graphs)
        wanted = {str(r.get("image_id")) for r in records}
        graphs = {str(k): v for k, v in loaded.items() if str(k) in wanted}
    preds = {name: load_predictions(p) for name, p in (predictions or {}).items()}
    review_ids: set[str] = set()
    if review is not None:
        for i, entry in enumerate(read_jsonl(review), 1):
            qid = entry.get("question_id") if isinstance(entry, dict) else None
            if not isinstance(qid, (str, int)) or isinstance(qid, bool):
                raise InputError("a review entry needs a question_id", path=str(review), record=f"line {i}")
            if not isinstance(entry.get("question", ""), str):  # shown beside the question's id
                raise InputError("a review entry's 'question' must be a string", path=str(review), record=f"line {i}")
            review_ids.add(str(entry["question_id"]))
    files = None
    if images_dir is not None:  # look once here, so the page asks for no file that is not there
        folder = Path(images_dir)
        files = {}
        for image_id in sorted({str(r.get("image_id")) for r in records}):
            found = [f"{image_id}{ext}" for ext in IMAGE_SUFFIXES if (folder / f"{image_id}{ext}").is_file()]
            files[image_id] = found[0] if found else None
    return ViewerInputs(records=records, scene_graphs=graphs, predictions=preds, review_ids=review_ids,
                        images=images, image_files=files, title=path.name or "contrast sets")
