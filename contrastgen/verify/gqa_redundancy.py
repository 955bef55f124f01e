"""Re-proving a GQA redundancy ladder (`contrastgen ood gqa-redundancy`), rung by rung.

A ladder directory holds `level_<n>.json` files, GQA question records each with a `ladder` block:
level 0 is the original question, level n (id `<original>_rd<n>`) the question with n redundant
operations removed, each made from level n - 1 by dropping one `filter` (Super-CLEVR's rd-), or a
`relate` with the steps that make its object (`verify.program_edits.relation_removal_problems`). Each
rung is checked here as the program-path invariance it claims to be, with the verifier's own code
(`checker.perturbation_problems`): level n - 1 is the original, level n the perturbation, so its
words differ from the level below by the dropped value only, its program is the one below less
that filter step, the program re-executed on the graph gives the same answer, and an `only` fact
shows the name alone still says the same objects. Around that, what makes it a ladder:
- level 0 is the original as given (the ladder claims nothing of it but that it is the original:
  its answer is GQA's gold answer, which every rung is proven to keep);
- each rung names the level below (`previous_id`), which exists; its chain is the one below plus
  this removal, its level is its place in the chain; its answer is level 0's;
- the change is a dropped attribute or relation (`to` empty) and the rung an invariance;
- the rung's words say exactly its program's filters: a value the removal leaves in the program is
  still said, and one it takes out is no longer said ("Do you see any white street signs or
  cars?" -> "... any street signs or cars?" is rejected while the cars' `filter color: white`
  stays). Judged against the level below, whose own words are GQA's: a value GQA says otherwise
  ("wooden" for `wood`) is the original's, not the rung's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import regex

from contrastgen.datasets.ladder_files import LADDER, read_levels
from contrastgen.files import scratch
from contrastgen.records import Failure, VerifyReport
from contrastgen.terminal.progress import progress as progress_bar
from contrastgen.verify.checker import CHECKS, IndexCache, perturbation_problems
from contrastgen.verify.rules import VerifyRules, load_rules, normalize_name
from contrastgen.verify.sharded import graphs_on_disk

BENCHMARK = "gqa-redundancy"
_WORD = regex.compile(r"\w+(?:'\w+)?|[^\w\s]")
# LADDER also names a problem with the ladder's shape: a missing level, a chain that does not follow


def _base_problems(qid: str, record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Level 0 is the original as given: its ladder says so and names it."""
    ladder = record[LADDER]
    if ladder.get("level") != 0 or ladder.get("chain") != [] or ladder.get("original_id") != qid:
        return [(LADDER, "a level-0 record is its own original, with no removals")]
    return []


def _shape_problems(qid: str, record: Mapping[str, Any], level: int, below: Mapping[str, Any] | None,
                    base: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    ladder = record[LADDER]
    chain = ladder.get("chain") if isinstance(ladder.get("chain"), list) else None
    problems = []
    if ladder.get("level") != level or chain is None or len(chain) != level:
        problems.append((LADDER, f"in level_{level}.json, but its ladder says level {ladder.get('level')!r} "
                         f"with {len(chain) if chain is not None else 'no'} removals"))
    if base is None:
        return problems + [(LADDER, f"its original {ladder.get('original_id')!r} is not in level_0.json")]
    if below is None:
        return problems + [(LADDER, f"the level below, {ladder.get('previous_id')!r}, is not in "
                            f"level_{level - 1}.json")]
    below_ladder = below[LADDER]
    if below_ladder.get("original_id") != ladder.get("original_id"):
        problems.append((LADDER, "the level below is another question's"))
    if chain is not None and (chain[:-1] != below_ladder.get("chain") or not chain
                              or normalize_name(str(chain[-1].get("value", ""))) !=
                              normalize_name(str((ladder.get("change") or {}).get("from", "")))):
        problems.append((LADDER, "its chain is not the level below's plus this removal"))
    if normalize_name(str(record.get("answer", ""))) != normalize_name(str(base.get("answer", ""))):
        problems.append(("answer", f"its answer {record.get('answer')!r} is not the original's {base.get('answer')!r}"))
    change = ladder.get("change") if isinstance(ladder.get("change"), Mapping) else {}
    if ladder.get("kind") != "invariance" or change.get("kind") not in ("attribute", "relation") \
            or change.get("to") != "":
        problems.append(("change", "a rung is an invariance that drops an attribute or a relation (change.to empty)"))
    if record.get("imageId") != base.get("imageId"):
        problems.append((LADDER, "its image is not the original's"))
    if qid == ladder.get("previous_id"):
        problems.append((LADDER, "it names itself as the level below"))
    return problems


def _words(text: Any) -> list[str]:
    return [w.lower() for w in _WORD.findall(str(text))]


def _value(argument: Any) -> str:
    value = " ".join(normalize_name(argument).split())
    return value[4:-1].strip() if value.startswith("not(") and value.endswith(")") else value


def _filters(semantic: Any) -> set[str]:
    steps = semantic if isinstance(semantic, list) else []
    return {_value(s.get("argument", "")) for s in steps if isinstance(s, Mapping)
            and str(s.get("operation", "")).split()[:1] == ["filter"]} - {""}


def _values(semantic: Any) -> set[str]:
    """The attribute values a program says: its filters', and its attribute verify/choose options."""
    out = _filters(semantic)
    for s in semantic if isinstance(semantic, list) else []:
        op = " ".join(str(s.get("operation", "")).split()) if isinstance(s, Mapping) else ""
        if op.split()[:1] in (["verify"], ["choose"]) and op not in ("verify rel", "choose rel"):
            out |= {_value(v) for v in str(s.get("argument", "")).split("|")} - {""}
    return out


def _said(words: list[str], value: str) -> bool:
    run = _words(value)
    return bool(run) and any(words[i:i + len(run)] == run for i in range(len(words) - len(run) + 1))


def said_filter_problems(below: Mapping[str, Any], record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The rung's words say its program's filter values as the level below's did: none the
    program keeps goes unsaid, none it dropped stays said (judged where the level below agreed)."""
    old_words, new_words = _words(below.get("question", "")), _words(record.get("question", ""))
    old_values, new_values = _values(below.get("semantic")), _values(record.get("semantic"))
    problems = []
    for value in sorted(_filters(below.get("semantic")) | _filters(record.get("semantic"))):
        if _said(old_words, value) == (value in old_values) and _said(new_words, value) != (value in new_values):
            kept = "keeps" if value in new_values else "no longer has"
            problems.append(("text_mismatch", f"the words {'no longer say' if value in new_values else 'still say'} "
                             f"{value!r}, which the program {kept}"))
    return problems


def verify_ladder(path: Path, scene_graphs: Mapping[str, dict[str, Any]], *,
                  rules: VerifyRules | None = None, progress: bool = False) -> VerifyReport:
    """Every rung of the ladder in `path` re-proven against the level below it; `checked` counts
    the rungs (level 0 is the original as given, its gold answer GQA's: only its shape is
    checked, and each rung's answer is re-proven equal to the one below)."""
    rules = rules or load_rules()
    levels = read_levels(path)
    report = VerifyReport(checked=0, check_order=(*CHECKS, LADDER))
    graphs = IndexCache(scene_graphs)  # a level's rungs come image by image: indexed about once a level
    with progress_bar("verifying rungs", sum(map(len, levels)), enabled=progress) as advance:
        for level, records in enumerate(levels):
            for qid, record in records.items():
                advance(1)
                if level == 0:
                    found = _base_problems(qid, record)
                    report.failures.extend(Failure(qid, None, message, check) for check, message in found)
                    continue
                report.checked += 1
                image = str(record.get("imageId", ""))
                if image not in scene_graphs:
                    report.failures.append(Failure(qid, None, f"image {image!r} is not among the scene graphs", "image"))
                    continue
                graph = graphs.get(image)
                ladder = record[LADDER]
                below = levels[level - 1].get(str(ladder.get("previous_id")))
                base = levels[0].get(str(ladder.get("original_id")))
                found = _shape_problems(qid, record, level, below, base)
                if below is not None:
                    rung = {"question_id": qid, "question": record.get("question"), "answer": record.get("answer"),
                            "semantic": record.get("semantic"), "change": ladder.get("change"),
                            "evidence": ladder.get("evidence"), "kind": ladder.get("kind"), "rank": 1}
                    found += perturbation_problems(rung, dict(below), graph, rules)
                    found += said_filter_problems(below, record)
                report.failures.extend(Failure(qid, None, message, check) for check, message in found)
    return report


def verify_ladder_dir(path: Path, scene_graphs_path: Path, *, progress: bool = False) -> VerifyReport:
    """`verify_ladder` with the graphs on disk, each parsed when a rung of its image comes."""
    with scratch.folder("verify-") as folder:
        return verify_ladder(path, graphs_on_disk(scene_graphs_path, folder), progress=progress)
