"""`contrastgen export --format vlmevalkit`: custom-dataset TSVs VLMEvalKit runs as they stand.

    LMUData=OUT python run.py --data Contrast_NAME_OpenEnded Contrast_NAME_MCQ --model ...

VLMEvalKit picks a custom dataset's kind per file (columns `A` and `B` make it multiple-choice),
so the questions go to two files:
- `Contrast_<name>_OpenEnded.tsv`: every question, open-ended (VQA rows). `OpenEnded` is in the
  name because VLMEvalKit's models treat a custom dataset as multiple-choice unless its name
  says `openended`. The question carries GQA's "Answer the question using a single word or
  phrase.", the line VLMEvalKit's own VQA datasets append (its custom VQA class appends none).
- `Contrast_<name>_MCQ.tsv`: every question with two possible answers, as a two-option
  multiple-choice question: yes/no and the other closed pairs of `rules/two_option_answers.tsv`,
  and questions that name their two choices ("Is the cup red or white?"). The two options are
  ordered per question by a seeded rule (`option_swapped`), recorded in the row's `option_order`:
  with one fixed order ("yes" always A) a model that always says "B" scores the share of "no"
  answers (57.8% on a real export). VLMEvalKit's circular evaluation would ask both orders, but it
  needs MMBench's index groups and the export refuses the names that switch it on
  (`rules/vlmevalkit_names.tsv`). `answer` is the gold letter, `category` the template, `l2-category` the row's role: `original`, the edit kind of a
  contrast perturbation (object, attribute, relation), or `invariance`; VLMEvalKit's accuracy
  table then shows originals against each kind of edit.
A question has the same `index` in both files. Rows carry `question_key` (`q:` and the question
id: VLMEvalKit reads the TSV with pandas' type guessing, which would turn GQA's id `05451384`
into the number 5451384) and the harness columns of `export.harness`; VLMEvalKit copies every
column into its prediction file, which is how `contrastgen evaluate` reads a run back.

Images are base64 (`--images DIR`), each stored once per file: a later row of the same image
holds the index of the first (VLMEvalKit's own space saving), and `image_path` names the one PNG
VLMEvalKit decodes it to. Without `--images`, `image_path` is each record's absolute file.
Every file is read back with pandas as VLMEvalKit reads it before the export is kept.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contrastgen.errors import InputError
from contrastgen.export.harness import (
    GROUP_CELL,
    INVARIANCE,
    ORIGINAL,
    HarnessExport,
    HarnessQuestion,
    check_name,
    harness_progress,
    harness_questions,
    has_groups,
)
from contrastgen.export.images import ImageSource
from contrastgen.files.atomic import atomic_dir, atomic_file
from contrastgen.jsonio import dumps, write_text
from contrastgen.resources import rules_resource
from contrastgen.terminal.progress import Advance

PREFIX = "Contrast_"
VQA_SUFFIX = "_OpenEnded"
MCQ_SUFFIX = "_MCQ"
POST_PROMPT = "\nAnswer the question using a single word or phrase."
KEY_PREFIX = "q:"
# VLMEvalKit reads an `image` of at most this many characters as another row's index.
REFERENCE_MAX = 64
BATCH = 2_000

VQA_COLUMNS = ("index", "image", "image_path", "question", "answer", "question_key", "image_id",
               "role", "contrast_ids", "templates", "question_type", "edit_kinds")
MCQ_COLUMNS = ("index", "image", "image_path", "question", "A", "B", "answer", "option_order", "category",
               "l2-category", "question_key", "image_id", "role", "contrast_ids", "question_type")
OPTION_SEED = 0  # the default seed of the options' order
GROUP_COLUMNS = ("groups", "group_id")  # with two-image groups (`generate --groups`) only


def _rules_lines(name: str) -> list[list[str]]:
    text = rules_resource(name).read_text(encoding="utf-8")
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@functools.cache
def two_option_answers() -> tuple[tuple[str, str, str], ...]:
    """(dataset or `*`, option A, option B) from `rules/two_option_answers.tsv`."""
    return tuple((d, a, b) for d, a, b in _rules_lines("two_option_answers.tsv"))


def dataset_names(name: str) -> tuple[str, str]:
    """The VQA and MCQ dataset names for `--name`, refused when VLMEvalKit would treat them as
    something else (`rules/vlmevalkit_names.tsv`)."""
    base = PREFIX + check_name(name)
    for part, match in _rules_lines("vlmevalkit_names.tsv"):
        if (part in base.lower()) if match == "nocase" else (part in base):
            raise InputError(f"--name {name!r}: VLMEvalKit treats a dataset whose name contains "
                             f"{part!r} as a special case; choose another name")
    return base + VQA_SUFFIX, base + MCQ_SUFFIX


def mcq_options(question: str, answer: str, dataset: str) -> tuple[str, str] | None:
    """The two options of a question with two possible answers, or None: a closed pair holding
    the answer, else the two choices the question names around `or`."""
    for scope, a, b in two_option_answers():
        if scope in ("*", dataset) and answer in (a, b):
            return a, b
    words = re.escape(answer)
    before = re.search(rf"\b([a-z]+) or (?:the )?{words}\b", question.lower())
    if before and before.group(1) != answer:
        return before.group(1), answer
    after = re.search(rf"\b{words} or (?:the )?([a-z]+)\b", question.lower())
    if after and after.group(1) != answer:
        return answer, after.group(1)
    return None


def option_swapped(question_id: str, seed: int = OPTION_SEED) -> bool:
    """Whether a question's two options go in the order opposite to `mcq_options`': a bit of
    sha256(seed, question id), so each order holds about half the questions whatever their answers,
    the same inputs and seed give the same file, and an original and its perturbations are ordered
    independently."""
    return hashlib.sha256(f"{seed}\0{question_id}".encode()).digest()[0] & 1 == 1


def l2_category(q: HarnessQuestion) -> str:
    if q.role in (ORIGINAL, INVARIANCE, GROUP_CELL):
        return q.role
    return q.edit_kinds[0]


@dataclass
class _File:
    """One TSV being written: rows go out in batches; `first_of_image` holds the index of each
    image's first row, which later rows of the image refer to."""

    name: str
    columns: tuple[str, ...]
    embed: bool
    handle: Any = None
    rows: int = 0
    first_of_image: dict[str, int] = field(default_factory=dict)
    batch: list[dict[str, Any]] = field(default_factory=list)

    def image_columns(self, index: int, q: HarnessQuestion, path: Path, images: ImageSource) -> dict[str, Any]:
        if not self.embed:
            return {"image_path": str(path)}
        first = self.first_of_image.setdefault(q.image_id, index)
        image = (base64.b64encode(images.read(path, q.question_id)).decode("ascii")
                 if first == index else str(first))
        return {"image": image, "image_path": f"{q.image_id}.png"}

    def add(self, row: dict[str, Any]) -> None:
        self.batch.append(row)
        if len(self.batch) == BATCH:
            self.flush()

    def flush(self) -> None:
        import pandas as pd

        if not self.batch and self.rows:
            return
        columns = [c for c in self.columns if self.embed or c != "image"]
        frame = pd.DataFrame(self.batch, columns=columns)
        text = frame.to_csv(sep="\t", index=False, header=self.rows == 0, lineterminator="\n")
        self.handle.write(text.encode("utf-8"))
        self.rows += len(self.batch)
        self.batch = []


def _json_list(values: tuple[str, ...]) -> str:
    return dumps(list(values)).decode("utf-8").strip()


def _vqa_row(index: int, q: HarnessQuestion, image: dict[str, Any]) -> dict[str, Any]:
    return {"index": index, **image, "question": q.question + POST_PROMPT, "answer": q.answer,
            "question_key": KEY_PREFIX + q.question_id, "image_id": q.image_id, "role": q.role,
            "contrast_ids": _json_list(q.contrast_ids), "templates": _json_list(q.templates),
            "question_type": q.question_type, "edit_kinds": _json_list(q.edit_kinds), **_group_columns(q)}


def _mcq_row(index: int, q: HarnessQuestion, image: dict[str, Any], options: tuple[str, str],
             seed: int) -> dict[str, Any]:
    swapped = option_swapped(q.question_id, seed)
    if swapped:
        options = (options[1], options[0])
    return {"index": index, **image, "question": q.question, "A": options[0], "B": options[1],
            "answer": "AB"[options.index(q.answer)], "option_order": "swapped" if swapped else "kept",
            "category": q.set_template,
            "l2-category": l2_category(q), "question_key": KEY_PREFIX + q.question_id,
            "image_id": q.image_id, "role": q.role, "contrast_ids": _json_list(q.contrast_ids),
            "question_type": q.question_type, **_group_columns(q)}


def _group_columns(q: HarnessQuestion) -> dict[str, str]:
    """`groups` and `group_id` (written only by an export of `generate --groups` output)."""
    return {"groups": _json_list(q.groups), "group_id": q.group_id}


def _write_rows(source: Path, images: ImageSource, vqa: _File, mcq: _File, seed: int,
                advance: Advance) -> set[str]:
    """Every question to the VQA file, those with two possible answers to the MCQ file too;
    returns the contrast sets seen."""
    sets: set[str] = set()
    for index, q in enumerate(harness_questions(source, advance)):
        sets.update(q.contrast_ids)
        path = images.path(q.image_id, q.image_file, q.question_id)
        if not images.embeds:
            images.check(path, q.question_id)
        vqa.add(_vqa_row(index, q, vqa.image_columns(index, q, path, images)))
        options = mcq_options(q.question, q.answer, q.dataset)
        if options is not None:
            mcq.add(_mcq_row(index, q, mcq.image_columns(index, q, path, images), options, seed))
    vqa.flush()
    mcq.flush()
    return sets


def read_back(file: Path, *, mcq: bool) -> int:
    """Read a written TSV as VLMEvalKit does (pandas' defaults) and check what its custom
    datasets need: a question column, unique indexes, no answer or option read as missing, the
    question keys as written, every image reference resolvable and every image decodable.
    Returns the number of rows."""
    import pandas as pd
    from PIL import Image

    frame = pd.read_csv(file, sep="\t")
    where = str(file)
    if "question" not in frame.columns:
        raise InputError("no question column", path=where)
    index = [str(i) for i in frame["index"]]
    if len(set(index)) != len(index):
        raise InputError("two rows share an index", path=where)
    keys = frame["question_key"]
    for column in ("question", "answer", *(("A", "B") if mcq else ())):
        missing = frame[column].isna()
        if missing.any():
            key = keys[missing.idxmax()]
            raise InputError(f"pandas reads the {column!r} of this row as missing (a value such as "
                             "'null' or 'nan'), so VLMEvalKit cannot use it", path=where, record=str(key))
    if not all(isinstance(k, str) and k.startswith(KEY_PREFIX) for k in keys):
        raise InputError("a question key did not read back as written", path=where)
    if "image" in frame.columns:
        images = dict(zip(index, (str(v) for v in frame["image"]), strict=True))
        for i, value in images.items():
            if len(value) <= REFERENCE_MAX:
                if len(images.get(value, "")) <= REFERENCE_MAX:
                    raise InputError(f"row {i}'s image refers to {value!r}, not a row with an image",
                                     path=where)
                continue
            try:
                with Image.open(io.BytesIO(base64.b64decode(value))) as image:
                    image.verify()
            except (OSError, ValueError, SyntaxError) as exc:
                raise InputError(f"row {i}'s image does not decode ({exc})", path=where) from None
    return len(frame)


def _readme(vqa_name: str, mcq_name: str | None, out: Path, questions: int, mcq_rows: int, source: Path,
            seed: int) -> str:
    mcq = (f"- `{mcq_name}.tsv`: {mcq_rows:,} of them with two possible answers, as two-option "
           f"multiple-choice questions, their options ordered by seed {seed} (`option_order`)\n") if mcq_name else ""
    mcq_run = (f"python run.py --data {mcq_name} --model MODEL --judge exact_matching\n"
               if mcq_name else "")
    mcq_eval = (f" \\\n    -p mcq='outputs/MODEL/T*/MODEL_{mcq_name}_exact_matching_result.xlsx'"
                if mcq_name else "")
    mcq_said = ("\nThe MCQ file holds only the questions with two possible answers, so `evaluate` scores it as a "
                "partial run: on the contrast sets all of whose questions it holds, and it says how many it "
                "does not.\n" if mcq_name else "")
    return f"""# VLMEvalKit custom datasets of a contrastgen contrast set

- `{vqa_name}.tsv`: {questions:,} questions, open-ended
{mcq}
```bash
export LMUData={out}        # or copy the .tsv files into your $LMUData
python run.py --data {vqa_name} --model MODEL --mode infer
{mcq_run}contrastgen evaluate --contrast {shlex.quote(str(source))} \\
    -p vqa='outputs/MODEL/T*/MODEL_{vqa_name}.xlsx'{mcq_eval}
```

VLMEvalKit does not score custom open-ended datasets (`--mode infer` writes the predictions);
`contrastgen evaluate` scores both files. Quote the patterns: `evaluate` expands them, and refuses
one that matches several files (a run folder `T*` per run: name the one to score).{mcq_said}
The columns are described in contrastgen's docs/harnesses.md.
"""


def export_vlmevalkit(source: str | os.PathLike[str], out: str | os.PathLike[str], *, name: str,
                      images: str | os.PathLike[str] | None = None, seed: int = OPTION_SEED,
                      progress: bool = False) -> HarnessExport:
    """Write the TSVs for the contrast sets of `source` to the folder `out` (replaced whole);
    `seed` orders the MCQ options (`option_swapped`). `progress`: a bar on a terminal, per
    contrast set read."""
    vqa_name, mcq_name = dataset_names(name)
    image_source = ImageSource(images)
    grouped = GROUP_COLUMNS if has_groups(source) else ()
    vqa = _File(vqa_name, VQA_COLUMNS + grouped, image_source.embeds)
    mcq = _File(mcq_name, MCQ_COLUMNS + grouped, image_source.embeds)
    out = Path(out).absolute()
    with atomic_dir(out) as tmp:
        vqa_file, mcq_file = tmp / f"{vqa_name}.tsv", tmp / f"{mcq_name}.tsv"
        with (atomic_file(vqa_file) as vqa.handle, atomic_file(mcq_file) as mcq.handle,
              harness_progress(source, enabled=progress) as advance):
            sets = _write_rows(Path(source), image_source, vqa, mcq, seed, advance)
        read_back(vqa_file, mcq=False)
        names = [vqa_name]
        if mcq.rows:
            read_back(mcq_file, mcq=True)
            names.append(mcq_name)
        else:  # a dataset of no rows is no benchmark: the file goes, and the README says why
            mcq_file.unlink()
        write_text(tmp / "README.md", _readme(vqa_name, mcq_name if mcq.rows else None, out,
                                              vqa.rows, mcq.rows, Path(source).absolute(), seed))
        files = tuple(sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file()))
    return HarnessExport(out=out, files=files, questions=vqa.rows, sets=len(sets), names=tuple(names))
