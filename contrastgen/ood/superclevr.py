"""Super-CLEVR's domain-shift splits, chosen from existing scenes and questions.

The paper (Li et al., "Super-CLEVR: A Virtual Benchmark to Diagnose Domain Robustness in Visual
Reasoning", CVPR 2023) *generates* a dataset per factor. Here the
data already exist, so each factor becomes a split of them, with statistics saying how far the
split shifts that factor:
- concept distribution: the frequencies of shapes, colours and materials over the scenes' objects,
  how long-tailed they are (the paper's d_i = a^-i: `a`, fitted by least squares on log frequency
  against rank; 1 is flat, the paper's slt is 1.3 and long 2.0), and their head (the most frequent
  concepts that cover `head_share` of the objects) and tail; a question is `head` when every
  concept its words and answer name is a head concept, `tail` when any is not (a concept no
  object has counts as the rarest), `none` when it names none;
- concept compositionality: the shape x colour co-occurrence over objects, and held-out
  combinations, rarest first, one colour per shape and only of shapes seen in another colour too,
  added while at least `train_share` of the scenes keep none; `co_train` are the questions whose
  scene has no object of a held-out combination, `co_test` the others, as the paper's co-1 / co-2
  hold combinations out of training;
- question redundancy: rd (the questions as they are), rd- and rd+ (each question rewritten with
  every redundant attribute dropped, or every attribute said), from programs read back from the
  words (`contrastgen.ood.superclevr_redundancy`).
Where this had to choose (the head share, one held-out colour per shape, text matching of
concepts through rules/ood/superclevr_concepts.tsv) docs/ood.md says so.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from contrastgen.datasets.clevr_released import CONCEPT_TYPES, PathLike, read_questions, read_scenes
from contrastgen.errors import InputError
from contrastgen.files.atomic import atomic_dir
from contrastgen.files.manifest import OOD_SUPERCLEVR, write_manifest
from contrastgen.jsonio import write_json, write_text
from contrastgen.resources import rules_file
from contrastgen.terminal.progress import Advance, noop
from contrastgen.terminal.progress import progress as progress_bar


@dataclass(frozen=True)
class SuperClevrConfig:
    head_share: float = 0.5  # the most frequent concepts covering this share of objects are the head
    train_share: float = 0.5  # held-out combinations are added while this share of scenes has none


@dataclass
class SuperClevrSplits:
    counts: dict[str, Counter[str]]
    tail_parameter: dict[str, float]
    head: dict[str, list[str]]
    tail: dict[str, list[str]]
    cooccurrence: dict[str, dict[str, int]]
    held_out: list[tuple[str, str]]
    splits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    redundancy: dict[str, Any] = field(default_factory=dict)

    def stats(self) -> dict[str, Any]:
        return {
            "benchmark": "super-clevr",
            "objects": sum(self.counts["shape"].values()),
            "concepts": {t: dict(sorted(self.counts[t].items(), key=lambda kv: (-kv[1], kv[0])))
                         for t in CONCEPT_TYPES},
            "tail_parameter_a": self.tail_parameter,
            "head": self.head, "tail": self.tail,
            "held_out_combinations": [list(p) for p in self.held_out],
            "questions": {name: len(qs) for name, qs in self.splits.items()},
            "redundancy": self.redundancy,
        }


def concept_words() -> list[tuple[str, str, regex.Pattern[str]]]:
    """(concept, type, pattern of its words, plural allowed) from rules/ood/superclevr_concepts.tsv."""
    out = []
    for line in rules_file("ood", "superclevr_concepts.tsv").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        concept, kind, words = (c.strip() for c in line.split("\t"))
        alternatives = "|".join(regex.escape(w) for w in sorted(words.split(","), key=len, reverse=True))
        out.append((concept, kind, regex.compile(rf"\b(?:{alternatives})(?:e?s)?\b", flags=regex.IGNORECASE)))
    return out


def question_concepts(q: dict[str, Any], words: list[tuple[str, str, regex.Pattern[str]]]) -> set[tuple[str, str]]:
    text = q["question"] + " " + (q["answer"] if isinstance(q.get("answer"), str) else "")
    return {(kind, concept) for concept, kind, pattern in words if pattern.search(text)}


def tail_parameter(counts: Counter[str]) -> float:
    """`a` of d_i = a^-i fitted to the frequencies by rank (least squares on their logarithms)."""
    values = sorted((c for c in counts.values() if c > 0), reverse=True)
    if len(values) < 2:
        return 1.0
    xs = list(range(len(values)))
    ys = [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return round(math.exp(-slope), 4)


def head_and_tail(counts: Counter[str], share: float) -> tuple[list[str], list[str]]:
    ranked = sorted(counts, key=lambda c: (-counts[c], c))
    total, run, head = sum(counts.values()), 0, []
    for concept in ranked:
        if run >= share * total:
            break
        head.append(concept)
        run += counts[concept]
    return head, [c for c in ranked if c not in head]


def _held_out(scenes: dict[str, list[dict[str, Any]]], train_share: float) -> list[tuple[str, str]]:
    """Shape-colour combinations to hold out of training, rarest first (ties by name), each of a
    shape also seen in another colour (so the shape itself stays in training), for as long as at
    least `train_share` of the scenes (those the questions ask about) keep none of them."""
    co: dict[str, Counter[str]] = {}
    for objs in scenes.values():
        for o in objs:
            co.setdefault(str(o["shape"]), Counter())[str(o["color"])] += 1
    candidates = sorted(((n, shape, color) for shape, colors in co.items() if len(colors) > 1
                         for color, n in colors.items()))
    pairs_of = {image: {(str(o["shape"]), str(o["color"])) for o in objs} for image, objs in scenes.items()}
    held: list[tuple[str, str]] = []
    for _, shape, color in candidates:
        trial = set(held) | {(shape, color)}
        if shape in {s for s, _ in held}:
            continue  # one colour per shape
        if sum(1 for pairs in pairs_of.values() if not pairs & trial) >= train_share * len(scenes):
            held.append((shape, color))
    return sorted(held)


def build_superclevr(scenes: dict[str, list[dict[str, Any]]], questions: list[dict[str, Any]],
                     config: SuperClevrConfig | None = None,
                     graphs: dict[str, dict[str, Any]] | None = None, advance: Advance = noop) -> SuperClevrSplits:
    """The concept splits; with `graphs` (the scenes in the data model), the redundancy splits too,
    calling `advance(1)` per question they word (a progress bar's)."""
    config = config or SuperClevrConfig()
    objects = [o for objs in scenes.values() for o in objs]
    counts = {t: Counter(str(o[t]) for o in objects) for t in CONCEPT_TYPES}
    heads, tails = {}, {}
    for t in CONCEPT_TYPES:
        heads[t], tails[t] = head_and_tail(counts[t], config.head_share)
    co: dict[str, Counter[str]] = {}
    for o in objects:
        co.setdefault(str(o["shape"]), Counter())[str(o["color"])] += 1
    asked = {Path(str(q.get("image") or q.get("image_filename"))).stem for q in questions}
    held = _held_out({i: objs for i, objs in scenes.items() if i in asked}, config.train_share)
    held_set = set(held)
    words = concept_words()
    splits: dict[str, list[dict[str, Any]]] = {"head": [], "tail": [], "none": [], "co_train": [], "co_test": []}
    for q in questions:
        image = Path(str(q.get("image") or q.get("image_filename"))).stem
        if image not in scenes:
            raise InputError("the question's scene is not among the scenes", record=f"question about {image}")
        named = question_concepts(q, words)
        if not named:
            splits["none"].append(q)
        elif any(c not in heads[t] for t, c in named):  # a concept no object has is rarer than any
            splits["tail"].append(q)
        else:
            splits["head"].append(q)
        in_scene = {(str(o["shape"]), str(o["color"])) for o in scenes[image]}
        splits["co_test" if in_scene & held_set else "co_train"].append(q)
    redundancy: dict[str, Any] = {}
    if graphs is not None:
        from contrastgen.ood.superclevr_redundancy import redundancy_splits

        rd_splits, redundancy = redundancy_splits(questions, graphs, advance)
        splits.update(rd_splits)
    return SuperClevrSplits(counts=counts, tail_parameter={t: tail_parameter(counts[t]) for t in CONCEPT_TYPES},
                            head=heads, tail=tails, cooccurrence={s: dict(sorted(c.items())) for s, c in sorted(co.items())},
                            held_out=held, splits=splits, redundancy=redundancy)


def render_markdown(stats: dict[str, Any]) -> str:
    lines = ["# Super-CLEVR domain-shift splits", "", f"{stats['objects']} objects.", "",
             "| concept type | concepts | a (d_i = a^-i) | head | tail |", "|---|---|---|---|---|"]
    for t in CONCEPT_TYPES:
        lines.append(f"| {t} | {len(stats['concepts'][t])} | {stats['tail_parameter_a'][t]} | "
                     f"{', '.join(stats['head'][t])} | {', '.join(stats['tail'][t])} |")
    lines += ["", "| split | questions |", "|---|---|"]
    lines += [f"| {name} | {n} |" for name, n in stats["questions"].items()]
    lines += ["", "Held-out shape/colour combinations: "
              + ", ".join(f"{s} {c}" for s, c in stats["held_out_combinations"]), "",
              ""]
    rd = stats.get("redundancy") or {}
    if rd:
        lines += ["| redundancy | questions | attributes said per question |", "|---|---|---|"]
        lines += [f"| {level} | {n} | {rd['mean_attributes_said'][level]} |" for level, n in rd["questions"].items()]
        lines += ["", "Originals: " + ", ".join(f"{k} {v}" for k, v in rd["originals"].items()) + ".",
                  "Left out: " + (", ".join(f"{lvl}: {k} {v}" for lvl, c in rd["left_out"].items()
                                            for k, v in c.items()) or "none") + ".", ""]
    return "\n".join(lines)


def run_superclevr(scenes: PathLike, questions: list[PathLike], out_dir: PathLike,
                   config: SuperClevrConfig | None = None, *, progress: bool = False) -> dict[str, Any]:
    """Read, split, write `out_dir` atomically: the splits ({"questions": [...]} each; rd-, rd, rd+
    with each question's program),
    concepts.json (frequencies, co-occurrence), stats.json and stats.md; returns the stats.
    `progress`: a bar on a terminal, per question of the redundancy splits."""
    from contrastgen.datasets.clevr import load_scenes

    objects = read_scenes(scenes)
    read = read_questions(questions, objects, scenes)
    graphs = load_scenes(scenes)
    with progress_bar("splitting questions", len(read), enabled=progress) as advance:
        built = build_superclevr(objects, read, config, graphs=graphs, advance=advance)
    stats = built.stats()
    with atomic_dir(out_dir) as tmp:
        for name, qs in built.splits.items():
            write_json(tmp / f"{name}.json", {"questions": qs})
        write_json(tmp / "concepts.json", {"counts": stats["concepts"], "cooccurrence": built.cooccurrence},
                   indent=True)
        write_json(tmp / "stats.json", stats, indent=True)
        write_text(tmp / "stats.md", render_markdown(stats))
        write_manifest(tmp, OOD_SUPERCLEVR, "contrastgen ood superclevr")
    return stats
