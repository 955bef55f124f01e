"""A caption set as a Hugging Face dataset: one row per (caption, negative), for MTEB-style pair
classification and for training.

Columns: `image` (the image itself, `datasets.Image`, with `--images DIR`; else its file name
`<image_id>.jpg`, a string), `caption`, `negative_caption`, `kind`, `image_id`, `caption_id`,
`negative_id`, `dataset`, `region` (x, y, w, h of the caption's objects) and `evidence` (the
negative's proof and facts as a JSON string: its facts differ in shape by proof, which an Arrow
column could hold only as a union). Written with `save_to_disk`; `datasets.load_from_disk(OUT)`
reads it. Beside it, a dataset card (README.md, `export.card`'s parts: the source dataset, its
licence, the citations, the generator's version and the run's settings from its stats.json), and
the same description, citation and licence in the split's `DatasetInfo`.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from contrastgen.errors import require_extra
from contrastgen.export import card
from contrastgen.export.caption_benchmarks import CaptionExport, pairs
from contrastgen.export.images import ImageSource
from contrastgen.export.write import SPLIT
from contrastgen.files.atomic import atomic_dir
from contrastgen.jsonio import dumps, read_json, write_text
from contrastgen.records import caption_file, read_caption_records
from contrastgen.terminal.progress import Advance, counted, noop

DESCRIPTION = ("Image-text hard negatives: per row an image, a true caption and a negative caption "
               "proven false on the image's scene graph, with the proof.")
COLUMNS = {
    "caption": "a caption true of the image, read from its scene graph",
    "negative_caption": "the caption with one part changed, proven false on the graph",
    "kind": "how the negative was made (SugarCrepe's and ARO's kinds: `replace_obj`, `swap_att`, `aro_relation`, ...)",
    "image_id": "the source dataset's image id",
    "caption_id": "the caption's id", "negative_id": "the negative's id (`<caption id>_<kind>`)",
    "dataset": "`gqa` or `clevr`", "region": "x, y, w, h of the box around the caption's objects",
    "evidence": "the negative's proof and the graph facts it rests on (JSON)",
}


def _rows(source: str | os.PathLike[str], images: ImageSource | None, advance: Advance) -> Iterator[dict[str, Any]]:
    for record, negative in pairs(counted(read_caption_records(source), advance)):
        image: Any = f"{record['image_id']}.jpg"
        if images is not None:
            path = images.path(record["image_id"], None, record["id"])
            image = {"bytes": images.read(path, record["id"]), "path": path.name}
        yield {"image": image, "caption": record["caption"], "negative_caption": negative["caption"],
               "kind": negative["kind"], "image_id": record["image_id"], "caption_id": record["id"],
               "negative_id": negative["id"], "dataset": record.get("dataset", ""), "region": record["region"],
               "evidence": dumps(negative["evidence"]).decode("utf-8")}


def _stats(source: str | os.PathLike[str]) -> dict[str, Any]:
    """The run's stats.json beside the captions file, if any (the card states its settings)."""
    stats = caption_file(source).with_name("stats.json")
    return read_json(stats) if stats.is_file() else {}


def _settings(stats: Mapping[str, Any]) -> str:
    parts = [f"{key.replace('_', ' ')} {stats[key]}" for key in ("seed", "per_image") if key in stats]
    if "balanced" in stats:
        parts.append("balanced against text-only models" if stats["balanced"] else "unbalanced")
    if stats.get("add_form"):
        parts.append(f"add kinds {stats['add_form']}")
    return ", ".join(parts)


def render_card(*, rows: int, kinds: Counter[str], datasets: tuple[str, ...], images: bool,
                stats: Mapping[str, Any], split: str) -> str:
    """The caption dataset's card (deterministic: the same rows and stats give the same bytes)."""
    license, note = card.license_for(datasets, None, None)
    settings = _settings(stats)
    lines = [
        "# Image-text hard negatives from scene graphs", "",
        "Each row pairs an image with a caption true of it and a negative caption, one part changed,",
        "proven false on the image's scene graph; `evidence` holds the proof, which `contrastgen verify`",
        "re-checks with code independent of the generator. A model that matches images and text",
        "compositionally scores the caption above the negative.", "",
        "## Loading", "", "```python", "from datasets import load_from_disk",
        f'ds = load_from_disk(".")["{split}"]', "```", "",
        "## How it was made", "",
        f"Made by {card.generator()} (`contrastgen captions generate`{', ' + settings if settings else ''}; "
        f"the scene-graph method of {card.sources_method()}, applied to captions), then exported by "
        "`contrastgen captions export --format hf`.", "",
        f"{rows:,} pairs ({', '.join(datasets)}), split `{split}`.", "",
        "| kind | pairs |", "|---|---:|", *(f"| {k} | {n:,} |" for k, n in sorted(kinds.items())), "",
        "## Fields", "", "| field | what |", "|---|---|",
        "| `image` | " + (card.IMAGE_DOC if images else "the image's file name, `<image_id>.jpg`") + " |",
        *(f"| `{name}` | {what} |" for name, what in COLUMNS.items()), "",
    ]
    if not images:
        lines += ["## Images", "", "This export has no images, only their file names; "
                  "`contrastgen captions export ... --format hf --images DIR` embeds them.", ""]
    lines += [*card.source_lines(datasets, license, note), *card.citation_lines(datasets)]
    metadata = {"license": license, "language": ["en"], "annotations_creators": ["machine-generated"],
                "language_creators": ["machine-generated"], "multilinguality": ["monolingual"],
                "source_datasets": [f"extended|other-{d}" for d in datasets],
                "task_categories": ["image-to-text"],
                "tags": ["hard-negatives", "compositionality", "scene-graphs", *datasets],
                "pretty_name": "Image-text hard negatives from scene graphs",
                "size_categories": [card.size_category(rows)]}
    return card.hub_card(metadata, "\n".join(lines))


def export_caption_hf(source: str | os.PathLike[str], out: str | os.PathLike[str], *,
                      images: str | os.PathLike[str] | None = None, split: str = SPLIT,
                      advance: Advance = noop) -> CaptionExport:
    require_extra("hf", ("datasets",), "a Hugging Face caption export")
    import datasets as hf_datasets
    from datasets import Dataset, DatasetDict, DatasetInfo, Features, Image, Sequence, Value

    hf_datasets.disable_progress_bars()

    source_images = ImageSource(images) if images is not None else None
    rows = list(_rows(source, source_images, advance))
    datasets = tuple(sorted({r["dataset"] or "gqa" for r in rows}))
    license = card.license_for(datasets, None, None)[0]
    features = Features({
        "image": Image() if source_images is not None else Value("string"),
        **{name: Value("string") for name in ("caption", "negative_caption", "kind", "image_id", "caption_id",
                                              "negative_id", "dataset")},
        "region": Sequence(Value("int64")), "evidence": Value("string")})
    columns = {name: [r[name] for r in rows] for name in features}
    # a fingerprint from the rows, not a random one, so the same input writes the same files
    digest = hashlib.sha256(b"".join(dumps({k: v for k, v in r.items() if k != "image"}) for r in rows))
    info = DatasetInfo(features=features, **card.info_fields(datasets, license, DESCRIPTION))
    ds = Dataset.from_dict(columns, features=features, info=info, split=split)
    ds._fingerprint = digest.hexdigest()[:16]
    text = render_card(rows=len(rows), kinds=Counter(r["kind"] for r in rows), datasets=datasets,
                       images=source_images is not None, stats=_stats(source), split=split)
    with atomic_dir(out) as tmp:
        DatasetDict({split: ds}).save_to_disk(str(tmp))
        write_text(tmp / "README.md", text)
        files = tuple(sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file()))
    return CaptionExport(Path(out), files, len(rows))
