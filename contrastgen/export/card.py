"""The dataset card (`README.md`) that goes with every export.

A contrast set that travels without its card loses what makes it usable: which fields mean what,
how many perturbations each template and k contributed, how it was made, and under what licence
the questions and graphs it derives from were released. The card is Hugging Face's format (YAML
metadata, then Markdown), so the Hub shows it and `datasets` reads the Parquet layout from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from contrastgen.export.rows import COLUMN_DOCS, SCHEMA

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


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "n>10M"


def _front_matter(f: CardFacts) -> str:
    meta: dict[str, Any] = {
        "license": f.license,
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "tags": ["contrast-sets", "scene-graphs", *f.datasets],
        "pretty_name": "Contrast sets from scene graphs",
        "size_categories": [_size_category(f.rows)],
    }
    if f.layout == "parquet":  # how the Hub and `load_dataset` find the split's files
        meta["configs"] = [{"config_name": "default",
                            "data_files": [{"split": f.split, "path": f"data/{f.split}-*.parquet"}]}]
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"


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


def render(f: CardFacts) -> str:
    """The card's text (deterministic: the same rows and stats give the same bytes)."""
    stats = f.stats
    made = ["Made by `contrastgen generate`"]
    if "seed" in stats:
        made.append(f"seed {stats['seed']}")
    if "max_k" in stats:
        made.append(f"up to k = {stats['max_k']} perturbations per question")
    lines = [
        _front_matter(f),
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
        ", ".join(made) + ", then exported by `contrastgen export`.",
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
    lines += ["", "Nested `change`, `evidence.query` and `evidence.facts` entries have a field per key the",
              "generators write (null where a fact has none) and `other`: the JSON of any key the",
              "schema does not name.", "",
              "## Licence", "", f"`{f.license}`. {f.license_note}", ""]
    return "\n".join(lines)
