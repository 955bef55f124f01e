"""VQA-VS's IID training, validation and test sets (Si et al. 2022, section 3.1), so that the
IID-minus-OOD gap the paper argues for is measured on one training set.

The paper merges VQA v2's train and val questions and samples 70% of them as training and 5% as
validation, at random; the other 25% are the IID test set, and every OOD test set is drawn from
that IID test set (its nine copies, grouped per shortcut). Validation and test therefore follow
the training distribution, and the OOD sets are rare-answer subsets of the IID test. Here the
split is a seeded shuffle of the question ids (sorted first, so the input's order does not
matter): the same questions and seed give the same three sets. The shuffle is over questions,
not images, as the paper's "samples" are: an image may have questions in two sets.

The shares given must sum to 1; their sizes are floor(share x n) for training and validation,
the rest for test. `contrastgen ood vqavs --iid-split` writes the three sets beside the OOD sets
(`iid/`), estimates the shortcuts' mutual information on the training set (as the paper does,
unless `--mi-questions` names another), builds the OOD sets from the IID test set, and keeps the
validation set's answers so `evaluate --ood` reports IID validation accuracy too.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contrastgen.datasets.samples import Sample
from contrastgen.errors import InputError
from contrastgen.jsonio import write_json

PARTS = ("train", "val", "test")
PAPER_SHARES = (0.70, 0.05, 0.25)
VAL_ANSWERS = "iid_val.json"  # the validation set's ids and answers, for scoring


@dataclass(frozen=True)
class IidSplit:
    """How to split: the seed, and the shares of training, validation and test."""

    seed: int = 0
    shares: tuple[float, float, float] = PAPER_SHARES

    def __post_init__(self) -> None:
        if len(self.shares) != 3 or any(not 0 <= s <= 1 for s in self.shares) or \
                not math.isclose(sum(self.shares), 1.0, abs_tol=1e-9):
            raise InputError(f"the IID shares (train, val, test) must be three numbers in [0, 1] summing to 1, "
                             f"got {', '.join(map(str, self.shares))}")
        if self.shares[2] == 0:
            raise InputError("the IID test share must be positive: the OOD sets are drawn from it")

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "shares": dict(zip(PARTS, self.shares, strict=True))}


def split_iid(samples: Sequence[Sample], split: IidSplit) -> dict[str, list[Sample]]:
    """train / val / test, each in the input's order; refused when a question id is given twice
    (a merged train + val pool that repeats a question would put it on both sides)."""
    ids = [s.question_id for s in samples]
    if len(set(ids)) != len(ids):
        twice = next(q for q, n in Counter(ids).items() if n > 1)
        raise InputError("question id given twice in the pool to split; merge train and val without repeats",
                         record=f"question {twice}")
    order = sorted(ids)
    random.Random(f"vqa-vs-iid:{split.seed}").shuffle(order)
    n_train = math.floor(split.shares[0] * len(order))
    n_val = math.floor(split.shares[1] * len(order))
    part_of = {q: "train" for q in order[:n_train]}
    part_of.update({q: "val" for q in order[n_train: n_train + n_val]})
    part_of.update({q: "test" for q in order[n_train + n_val:]})
    out: dict[str, list[Sample]] = {p: [] for p in PARTS}
    for s in samples:
        out[part_of[s.question_id]].append(s)
    return out


def write_iid_parts(tmp: Path, parts: Mapping[str, Sequence[Sample]], data_format: str) -> None:
    """`iid/<part>-Ques.json` and `-Ans.json` (VQA v2's files) or `iid/<part>.json` (GQA's), for
    training and model selection; and `iid_val.json`, the validation answers `evaluate` scores."""
    from contrastgen.jsonio import write_chunks
    from contrastgen.ood.vqavs import gqa_questions_object, vqa_question_files

    for part, samples in parts.items():
        if data_format == "gqa":
            write_chunks(tmp / "iid" / f"{part}.json", gqa_questions_object(samples))
        else:
            ques, ans = vqa_question_files(samples)
            write_json(tmp / "iid" / f"{part}-Ques.json", ques)
            write_json(tmp / "iid" / f"{part}-Ans.json", ans)
    val = parts["val"]
    write_json(tmp / VAL_ANSWERS, {"ids": [s.question_id for s in val],
                                   "answers": {s.question_id: {"answer": s.answer, "answers": s.answers,
                                                               "answer_type": s.answer_type} for s in val}})


def iid_stats(split: IidSplit, parts: Mapping[str, Sequence[Sample]]) -> dict[str, Any]:
    return {**split.to_json(), "sizes": {p: len(parts[p]) for p in PARTS}}
