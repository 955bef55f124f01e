"""The dataset card (`README.md`) that goes with every export.

A contrast set that travels without its card loses what makes it usable: which fields mean what,
how many perturbations each template and k contributed, how it was made (the generator's version
and settings), what it derives from and under what licence, and what to cite. The card is
Hugging Face's format (YAML metadata, then Markdown), written with `huggingface_hub`'s
`DatasetCardData` and `DatasetCard` (the library the Hub's own tools write cards with: the
metadata's keys are the Hub's, and the card is parsed back before it is written), so the Hub shows
it and `datasets` reads the Parquet layout from it. The same facts fill the `DatasetInfo` of a
saved Hugging Face dataset (`info_fields`).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

import contrastgen
from contrastgen.export.rows import COLUMN_DOCS, SCHEMA
from contrastgen.resources import rules_resource

# What the inputs were released under, by the dataset the records say they come from. A user
# exporting data with another licence says so with `--license` / `--license-note`.
INHERITED_LICENSES: dict[str, tuple[str, str]] = {
    "gqa": ("cc-by-4.0", "GQA's questions and scene graphs (Hudson and Manning, 2019) are released "
                         "under CC BY 4.0; its images are Visual Genome's."),
    "clevr": ("cc-by-4.0", "CLEVR (Johnson et al., 2017) and Super-CLEVR (Li et al., 2023) release "
                           "their questions and scenes under CC BY 4.0; the generators' code, whose "
                           "templates contrastgen reads, is BSD-licensed."),
}


@dataclass(frozen=True)
class CardFacts:
    """What the card states, gathered from the rows and the run's `stats.json`."""

    rows: int
    sets: int
    datasets: tuple[str, ...]
    per_template: dict[str, dict[str, int]]  # template -> {"k=1": n, ..., "contrast": n, "invariance": n}
    ks: tuple[int, ...]
    stats: Mapping[str, Any]  # the run's stats.json, {} when the source had none
    license: str
    license_note: str
    split: str
    layout: str  # parquet | hf | jsonl
    images: bool = False  # rows carry their image (`export --images DIR`)


class Tally:
    """The card's counts, kept while rows stream past (the rows themselves are not kept)."""

    def __init__(self, ks: Sequence[int]):
        self.ks = tuple(ks)
        self.rows = 0
        self.datasets: set[str] = set()
        self._per_template: dict[str, Counter[str]] = {}

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows += 1
        self.datasets.add(row["dataset"])
        c = self._per_template.setdefault(row["template"], Counter())
        for k in self.ks:
            if row["rank"] <= k:
                c[f"k={k}"] += 1
        c[row["kind"]] += 1

    def per_template(self) -> dict[str, dict[str, int]]:
        """Rows per template: in the set for each k (rank <= k), and per kind."""
        return {t: dict(c) for t, c in sorted(self._per_template.items())}


def license_for(datasets: Sequence[str], override: str | None, note: str | None) -> tuple[str, str]:
    """The licence identifier and its sentence: the user's, else the inputs' if all agree."""
    if override:
        return override, note or f"Licence given at export: {override}."
    known = [INHERITED_LICENSES[d] for d in datasets if d in INHERITED_LICENSES]
    if known and len(known) == len(datasets) and len({ident for ident, _ in known}) == 1:
        return known[0][0], note or " ".join(sentence for _, sentence in known)
    return "other", note or "The inputs' licence is not known to contrastgen; see where they came from."


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "n>10M"


@functools.cache
def _citations() -> dict[str, Any]:
    return orjson.loads(rules_resource("citations.json").read_bytes())


def sources(datasets: Sequence[str]) -> list[dict[str, str]]:
    """The source datasets the records name (`rules/citations.json`), in the given order."""
    known = _citations()["datasets"]
    return [entry for d in datasets for entry in known.get(d, ())]


def citation(datasets: Sequence[str]) -> str:
    """BibTeX of the method's paper, then of each source dataset."""
    return "\n\n".join([_citations()["method"]["bibtex"], *(s["bibtex"] for s in sources(datasets))])


def sources_method() -> str:
    """The method's paper, as the cards name it."""
    return _citations()["method"]["name"]


def generator() -> str:
    """The generator's name and version, as the card and `DatasetInfo` state it."""
    return f"contrastgen {contrastgen.__version__}"


def info_fields(datasets: Sequence[str], license: str, description: str) -> dict[str, str]:
    """`DatasetInfo`'s description, citation, homepage and licence: what a saved dataset carries
    where no card travels with it (`load_from_disk(...).info`)."""
    homepages = [s["homepage"] for s in sources(datasets)]
    return {"description": f"{description} Made by {generator()} with the method of "
                           f"{sources_method()}.",
            "citation": citation(datasets), "homepage": homepages[0] if len(homepages) == 1 else "",
            "license": license}


def hub_card(metadata: Mapping[str, Any], body: str) -> str:
    """The card's text: `metadata` as `DatasetCardData` (the Hub's metadata keys) and `body`,
    parsed by `DatasetCard` as the Hub parses a README."""
    from huggingface_hub import DatasetCard, DatasetCardData

    data = DatasetCardData(**metadata)
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n{body}"))


def source_lines(datasets: Sequence[str], license: str, license_note: str) -> list[str]:
    """The card's section on what the rows derive from and under what licence."""
    lines = ["## Source data and licence", ""]
    lines += [f"- {s['name']}: {s['homepage']}" for s in sources(datasets)]
    return [*lines, "", f"Licence: `{license}`. {license_note}", ""]


def citation_lines(datasets: Sequence[str]) -> list[str]:
    """The card's citation section: the method's paper and the source datasets, as BibTeX."""
    method = _citations()["method"]
    lines = ["## Citation", "", f"The method: {method['name']}; its authors' code: {method['code']}.",
             "Cite it and the source data:", "", "```bibtex", citation(datasets), "```", ""]
    return lines


def _front_matter(f: CardFacts) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "license": f.license,
        "language": ["en"],
        "annotations_creators": ["machine-generated"],
        "language_creators": ["machine-generated"],
        "multilinguality": ["monolingual"],
        "source_datasets": [f"extended|other-{d}" for d in f.datasets],
        "task_categories": ["visual-question-answering"],
        "tags": ["contrast-sets", "scene-graphs", *f.datasets],
        "pretty_name": "Contrast sets from scene graphs",
        "size_categories": [size_category(f.rows)],
    }
    if f.layout == "parquet":  # how the Hub and `load_dataset` find the split's files
        meta["configs"] = [{"config_name": "default",
                            "data_files": [{"split": f.split, "path": f"data/{f.split}-*.parquet"}]}]
    return meta


_LOADING = {
    "parquet": ('from datasets import load_dataset\n'
                'ds = load_dataset("parquet", data_files={{"{split}": "data/{split}-*.parquet"}})["{split}"]\n'
                '# or: pandas.read_parquet("data/"), polars.read_parquet("data/*.parquet")'),
    "hf": 'from datasets import load_from_disk\nds = load_from_disk(".")["{split}"]',
    "jsonl": ('from datasets import load_dataset\n'
              'ds = load_dataset("json", data_files={{"{split}": "{split}.jsonl"}})["{split}"]\n'
              '# or: pandas.read_json("{split}.jsonl", lines=True)'),
}


def _type_of(kind: Any) -> str:
    return str(kind).replace("<item: ", "<").replace("element: ", "")


DESCRIPTION = ("Contrast sets for visual question answering: each row one perturbation of a question "
               "(one object, attribute or relation changed), its answer computed from the image's "
               "scene graph, with the evidence that proves it.")
IMAGE_DOC = ("the image, embedded (`datasets.Image`: it loads as a PIL image; in Parquet the Hub's "
             "struct of `bytes` and `path`, the file's name)")


def _images_lines(f: CardFacts) -> list[str]:
    if f.images:
        return ["## Images", "", "Each row carries its image in the `image` column (the file given at "
                "export, bytes as they were), so the set needs nothing else to run.", ""]
    homes = "; ".join(f"{s['name']}: {s['homepage']}" for s in sources(f.datasets))
    return ["## Images", "", "This export has no image column: each row names its image by `image_id` "
            f"(the source dataset's image id; {homes}). `contrastgen export ... --images DIR` embeds "
            "them (`{image_id}.jpg|jpeg|png` in DIR).", ""]


def render(f: CardFacts) -> str:
    """The card's text (deterministic: the same rows and stats give the same bytes)."""
    stats = f.stats
    made = [f"Made by {generator()} (`contrastgen generate`"]
    if "seed" in stats:
        made.append(f"seed {stats['seed']}")
    if "max_k" in stats:
        made.append(f"up to k = {stats['max_k']} perturbations per question")
    lines = [
        "# Contrast sets from scene graphs",
        "",
        "Each row is one perturbation of a visual question: one atom of the original (an object, an",
        "attribute or a relation) replaced, and the new answer computed from the image's scene graph.",
        "A `contrast` row's answer differs from the original's; an `invariance` row's is provably the",
        "same. Every row carries the evidence that proves its answer (`evidence`), which",
        "`contrastgen verify` re-checks with code independent of the generator. A model that reasons",
        "answers both questions of a pair right; one that takes a shortcut tends to answer both alike.",
        "",
        "## Loading",
        "",
        "```python",
        _LOADING[f.layout].format(split=f.split),
        "```",
        "",
        "The set for k keeps the rows with `rank <= k`. `contrastgen evaluate` scores predictions for",
        "the `question_id`s here (and the originals') by template, k and question type.",
        "",
        "## How it was made",
        "",
        ", ".join(made) + f"; the method of {sources_method()}), then exported by "
        "`contrastgen export`.",
    ]
    if stats.get("questions") is not None:
        lines += ["", f"Input: {stats['questions']:,} questions over {stats.get('images', 0):,} images; "
                      f"{stats.get('perturbed_questions', 0):,} questions got at least one perturbation."]
    reasons = stats.get("reasons")
    if isinstance(reasons, Mapping) and reasons:
        top = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:8]
        lines += ["", "Questions left unperturbed, by reason (a question the tool cannot read with "
                      "certainty is refused and counted, never guessed): "
                  + ", ".join(f"`{r}` {n:,}" for r, n in top) + "."]
    lines += ["", f"{f.rows:,} perturbations of {f.sets:,} contrast sets "
                  f"({', '.join(f.datasets)}), split `{f.split}`.", "",
              "## Counts per template and k", "",
              "| template | " + " | ".join(f"k={k}" for k in f.ks) + " | contrast | invariance |",
              "|---|" + "---:|" * (len(f.ks) + 2)]
    for template, c in f.per_template.items():
        lines.append(f"| {template} | " + " | ".join(f"{c.get(f'k={k}', 0):,}" for k in f.ks)
                     + f" | {c.get('contrast', 0):,} | {c.get('invariance', 0):,} |")
    lines += ["", "## Fields", "", "| field | type | what |", "|---|---|---|"]
    for field in SCHEMA:
        lines.append(f"| `{field.name}` | `{_type_of(field.type)}` | {COLUMN_DOCS[field.name]} |")
    if f.images:
        lines.append(f"| `image` | `image` | {IMAGE_DOC} |")
    lines += ["", "Nested `change`, `evidence.query` and `evidence.facts` entries have a field per key the",
              "generators write (null where a fact has none) and `other`: the JSON of any key the",
              "schema does not name.", "",
              *_images_lines(f), *source_lines(f.datasets, f.license, f.license_note), *citation_lines(f.datasets)]
    return hub_card(_front_matter(f), "\n".join(lines))
