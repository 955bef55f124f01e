"""A run's statistics, in the paper's terms (Tables 5-8): counted from the workers' outcomes, and
shown as Markdown (stats.md) and as a terminal table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from rich.table import Table

from contrastgen.perturb import PerturbResult

KS = (1, 3, 5)


class Outcome(NamedTuple):
    """What the statistics need of one (question, template) result: small enough that hundreds
    of thousands of them cross from the workers to the parent cheaply."""

    question_id: str
    image_id: str
    template: str | None
    reason: str | None
    ranks: tuple[int, ...]
    structural: str  # GQA's types.structural of the question ("unknown" without types)
    detailed: str  # GQA's types.detailed
    contrasted: bool = False  # has a contrast perturbation, not only invariances


def outcome(r: PerturbResult) -> Outcome:
    """What the statistics keep of a result."""
    types = r.types
    return Outcome(r.question_id, r.image_id, r.template, r.reason,
                   tuple(p.rank for p in r.perturbations),
                   str(types.get("structural") or "unknown"), str(types.get("detailed") or "unknown"),
                   any(not p.invariance for p in r.perturbations))


TYPE_LEVELS = ("structural", "detailed")


def compute_stats(results: list[Outcome], n_questions: int, images: set[str],
                  scene_graphs: Mapping[str, dict], max_k: int, seed: int,
                  template_ids: list[str] | None) -> dict[str, Any]:
    """Counts as in the paper's Tables 5-8, plus a count per reason for no perturbation.

    `results` need hold only the matched (question, template) pairs: every one of the
    `n_questions` questions without one is counted as `no_match`; `images` are the images of all
    the questions.
    """
    tally = StatsTally(template_ids, max_k)
    tally.add(results)
    return tally.result(n_questions, images, scene_graphs, seed)


class StatsTally:
    """`compute_stats`, fed one shard's outcomes at a time, so a run need not keep them all.

    Exact because a shard holds whole images: a question and an image belong to one shard, so the
    questions and images counted distinct within each shard add up to the run's.
    """

    def __init__(self, template_ids: list[str] | None, max_k: int):
        """`template_ids`: the rows, in order; None: the templates the outcomes name, sorted (a
        CLEVR run's families are known only once its questions are read)."""
        self.max_k = max_k
        self.ks = [k for k in KS if k <= max_k] + ([max_k] if max_k not in KS else [])
        self.discovered = template_ids is None
        self.per_t: dict[str, dict[str, Any]] = {t: self._row() for t in template_ids or ()}
        self.reasons: Counter = Counter()
        self.matched_questions = self.perturbed_questions = self.contrasted_questions = self.augmented_images = 0
        self.aug_k: Counter = Counter()
        self.per_type: dict[str, dict[str, dict[str, Any]]] = {level: {} for level in TYPE_LEVELS}

    def _row(self) -> dict[str, Any]:
        return {"matched": 0, "perturbed": 0, "with_contrast": 0, "perturbations": {f"k{k}": 0 for k in self.ks},
                "images": 0, "augmented_images": 0, "reasons": Counter()}

    def add(self, outcomes: Iterable[Outcome]) -> None:
        """One shard's outcomes (or a whole run's at once)."""
        ks = self.ks
        matched_q, perturbed_q, contrasted_q, aug_images = set(), set(), set(), set()
        t_images: dict[str, set[str]] = {}
        t_aug_images: dict[str, set[str]] = {}
        for r in outcomes:
            if r.template is None:
                continue
            for level in TYPE_LEVELS:
                _count_type(self.per_type[level], getattr(r, level), r, ks)
            t = self.per_t[r.template] if not self.discovered else self.per_t.setdefault(r.template, self._row())
            t["matched"] += 1
            t_images.setdefault(r.template, set()).add(r.image_id)
            matched_q.add(r.question_id)
            if r.ranks:
                t["perturbed"] += 1
                t["with_contrast"] += r.contrasted
                t_aug_images.setdefault(r.template, set()).add(r.image_id)
                perturbed_q.add(r.question_id)
                if r.contrasted:
                    contrasted_q.add(r.question_id)
                aug_images.add(r.image_id)
                for k in ks:
                    n = sum(1 for rank in r.ranks if rank <= k)
                    t["perturbations"][f"k{k}"] += n
                    self.aug_k[f"k{k}"] += n
            else:
                t["reasons"][r.reason] += 1
                self.reasons[r.reason] += 1
        for template, found in t_images.items():
            self.per_t[template]["images"] += len(found)
        for template, found in t_aug_images.items():
            self.per_t[template]["augmented_images"] += len(found)
        self.matched_questions += len(matched_q)
        self.perturbed_questions += len(perturbed_q)
        self.contrasted_questions += len(contrasted_q)
        self.augmented_images += len(aug_images)

    def merge(self, other: StatsTally) -> None:
        """Another tally's counts: a shard's, tallied in the worker that ran it, so its outcomes
        need not cross to this process. Exact for the reason `add` is: images and questions are
        counted distinct per shard, and a shard holds whole images."""
        for tid, row in other.per_t.items():
            mine = self.per_t.get(tid)
            if mine is None:
                if not self.discovered:
                    raise KeyError(tid)  # as `add` refuses a template outside the rows
                mine = self.per_t[tid] = self._row()
            _add_counts(mine, row)
        for level in TYPE_LEVELS:
            counts = self.per_type[level]
            for name, c in other.per_type[level].items():
                if name in counts:
                    _add_counts(counts[name], c)
                else:
                    counts[name] = _copy_counts(c)
        self.reasons.update(other.reasons)
        self.aug_k.update(other.aug_k)
        self.matched_questions += other.matched_questions
        self.perturbed_questions += other.perturbed_questions
        self.contrasted_questions += other.contrasted_questions
        self.augmented_images += other.augmented_images

    def result(self, n_questions: int, images: set[str], scene_graphs: Mapping[str, dict],
               seed: int) -> dict[str, Any]:
        ks, n_q = self.ks, n_questions
        reasons = Counter(self.reasons)
        if n_q > self.matched_questions:
            reasons["no_match"] += n_q - self.matched_questions
        out_t = {}
        for tid, t in sorted(self.per_t.items()) if self.discovered else self.per_t.items():
            out_t[tid] = {"matched": t["matched"], "perturbed": t["perturbed"], "with_contrast": t["with_contrast"],
                          "perturbations": t["perturbations"], "images": t["images"],
                          "augmented_images": t["augmented_images"],
                          "reasons": dict(sorted(t["reasons"].items()))}
        aug_k = self.aug_k
        return {
            "max_k": self.max_k, "seed": seed, "ks": ks,
            "questions": n_q, "images": len(images),
            "images_with_scene_graph": sum(1 for i in images if i in scene_graphs),
            "matched_questions": self.matched_questions, "perturbed_questions": self.perturbed_questions,
            "questions_with_contrast": self.contrasted_questions,
            "augmented_images": self.augmented_images,
            "perturbations": {k: aug_k.get(k, 0) for k in (f"k{k}" for k in ks)},
            "percent_augmented_images": _pct(self.augmented_images, len(images)),
            "percent_augmented_questions": {k: _pct(aug_k.get(k, 0), n_q) for k in (f"k{k}" for k in ks)},
            "reasons": dict(sorted(reasons.items())),
            "templates": out_t,
            "question_types": {level: {name: {**c, "reasons": dict(sorted(c["reasons"].items()))}
                                       for name, c in sorted(self.per_type[level].items())}
                               for level in TYPE_LEVELS},
        }


def _count_type(counts: dict[str, dict[str, Any]], name: str, r: Outcome, ks: list[int]) -> None:
    """Matched (question, template) pairs of one GQA question type, perturbed or refused."""
    c = counts.get(name)
    if c is None:
        c = counts[name] = {"matched": 0, "perturbed": 0, "with_contrast": 0,
                            "perturbations": {f"k{k}": 0 for k in ks}, "reasons": Counter()}
    c["matched"] += 1
    if r.ranks:
        c["perturbed"] += 1
        c["with_contrast"] += r.contrasted
        for k in ks:
            c["perturbations"][f"k{k}"] += sum(1 for rank in r.ranks if rank <= k)
    else:
        c["reasons"][r.reason] += 1


def _add_counts(into: dict[str, Any], counts: Mapping[str, Any]) -> None:
    """Add a row of counts (ints, and dicts or Counters of ints, nested) into another."""
    for key, value in counts.items():
        if isinstance(value, dict):
            _add_counts(into.setdefault(key, Counter() if isinstance(value, Counter) else {}), value)
        else:
            into[key] = into.get(key, 0) + value


def _copy_counts(counts: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    _add_counts(out, counts)
    return out


def _pct(a: int, b: int) -> float:
    return round(100.0 * a / b, 2) if b else 0.0



def _rows(stats: dict[str, Any]) -> list[list[str]]:
    ks = stats["ks"]
    rows = []
    for tid, t in stats["templates"].items():
        rows.append([tid, str(t["matched"]), str(t["perturbed"]), str(t["with_contrast"]),
                     *[str(t["perturbations"][f"k{k}"]) for k in ks], str(t["augmented_images"])])
    rows.append(["all", str(stats["matched_questions"]), str(stats["perturbed_questions"]),
                 str(stats["questions_with_contrast"]),
                 *[str(stats["perturbations"][f"k{k}"]) for k in ks], str(stats["augmented_images"])])
    return rows


def _header(stats: dict[str, Any]) -> list[str]:
    return ["template", "matched", "perturbed", "with a contrast", *[f"k={k}" for k in stats["ks"]], "images"]


def stats_markdown(stats: dict[str, Any]) -> str:
    head = _header(stats)
    lines = ["# Contrast-set generation statistics", "",
             f"{stats['questions']} questions on {stats['images']} images "
             f"({stats['images_with_scene_graph']} with a scene graph); max-k {stats['max_k']}, seed {stats['seed']}.",
             f"Augmented images: {stats['augmented_images']} ({stats['percent_augmented_images']}%). "
             "Augmented questions: " + ", ".join(f"{k}: {v}%" for k, v in stats["percent_augmented_questions"].items()),
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(stats)]
    lines += ["", "## Why questions were not perturbed", "", "| template | reason | count |", "|---|---|---|"]
    lines += [f"| (any) | {r} | {n} |" for r, n in stats["reasons"].items() if r in ("no_match", "no_scene_graph")]
    for tid, t in stats["templates"].items():
        lines += [f"| {tid} | {r} | {n} |" for r, n in t["reasons"].items()]
    for level in TYPE_LEVELS:
        counts = stats.get("question_types", {}).get(level, {})
        if not counts:
            continue
        lines += ["", f"## By GQA question type (`types.{level}`), matched (question, template) pairs", "",
                  "| type | matched | perturbed | with a contrast | " + " | ".join(f"k={k}" for k in stats["ks"])
                  + " | not perturbed, by reason |",
                  "|---|---|---|---|" + "---|" * len(stats["ks"]) + "---|"]
        for name, c in counts.items():
            why = ", ".join(f"{r} {n}" for r, n in c["reasons"].items()) or "-"
            lines.append(f"| {name} | {c['matched']} | {c['perturbed']} | {c['with_contrast']} | "
                         + " | ".join(str(c["perturbations"][f"k{k}"]) for k in stats["ks"]) + f" | {why} |")
    return "\n".join(lines) + "\n"


def stats_table(stats: dict[str, Any]) -> Table:
    table = Table(title=f"contrast sets (max-k {stats['max_k']}, seed {stats['seed']})")
    for i, h in enumerate(_header(stats)):
        table.add_column(h, justify="left" if i == 0 else "right")
    for r in _rows(stats):
        table.add_row(*r)
    return table
