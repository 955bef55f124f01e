"""How fast and how lean `contrastgen verify` checks a large contrast set.

Two workloads. The default one is synthetic and in this process: seeded random scene graphs
(GQA-sized: ~20 objects, ~4 edges each) with valid evidence for every query op, checked by the
library's `verify_contrast_sets`: the checks' own cost, per perturbation, without the real 10 GB
of graphs. `--out` times the command itself, in a child process, on a set `generate` made (e.g.
`bench_generate.py --mode both --keep OUT`): wall, CPU over the process tree, the largest
process's peak RSS, the tree's peak PSS and the host probe, as `bench_generate.py` reports
`generate`; `--source` runs another checkout's code (a `git archive` of a revision) on the same
set, and both reports must be the same bytes.

    .venv/bin/python benchmarks/bench_verify.py --images 10000 --per-image 20
    .venv/bin/python benchmarks/bench_verify.py --out OUT --scene-graphs SG [--workers N] [--source DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_generate import TreeMemorySampler, host_probe, machine

from contrastgen.datasets.gqa import load_scene_graphs
from contrastgen.jsonio import read_jsonl, write_json, write_jsonl
from contrastgen.verify.checker import verify_contrast_sets
from contrastgen.verify.nouns import load_nouns
from contrastgen.verify.rules import load_rules

# Real nouns, so that the verifier's word check reads the questions as it reads GQA's.
NAMES = ["dog", "cat", "horse", "cow", "sheep", "bird", "car", "bus", "truck", "boat", "train", "bicycle",
         "chair", "table", "bench", "sofa", "bed", "lamp", "clock", "vase", "bottle", "cup", "bowl", "plate",
         "fork", "knife", "spoon", "pizza", "cake", "banana", "apple", "orange", "tree", "bush", "flower",
         "fence", "building", "window", "door", "sign", "pole", "kite", "umbrella", "bag", "box", "book",
         "laptop", "phone", "keyboard", "television", "elephant", "giraffe", "zebra", "bear", "tower",
         "bridge", "road", "cabinet", "shelf", "pillow"]
COLORS = ["red", "white", "black", "blue", "green"]
TEMPLATE, SUFFIX = "what_color_is_the_x", "c"  # any template of rules/templates.json: only ids depend on it
OPPOSITE = {"to the left of": "to the right of", "to the right of": "to the left of"}


def make_graph(rng: random.Random, n_objects: int) -> dict:
    objects = {}
    ids = [str(i) for i in range(n_objects)]
    for oid in ids:
        objects[oid] = {"name": rng.choice(NAMES), "x": rng.randrange(600), "y": 0, "w": rng.randrange(1, 40),
                        "h": 10, "attributes": [rng.choice(COLORS), "small"], "relations": []}
    for oid in ids:
        for other in rng.sample(ids, 4):
            if other != oid:
                rel = rng.choice(["near", "on", "to the left of", "to the right of"])
                objects[oid]["relations"].append({"name": rel, "object": other})
    return {"width": 640, "height": 480, "objects": objects}


def perturbations(rng: random.Random, g: dict, k: int) -> list[tuple[str, dict]]:
    """(original answer, perturbation) pairs with valid evidence, cycling through the ops."""
    objs = g["objects"]
    counts: dict[str, int] = {}
    for o in objs.values():
        counts[o["name"]] = counts.get(o["name"], 0) + 1
    unique = [oid for oid, o in objs.items() if counts[o["name"]] == 1]
    absent = [n for n in NAMES if n not in counts]
    lr = {(s, r["name"], r["object"]) for s, o in objs.items() for r in o["relations"] if r["name"] in OPPOSITE}
    # a pair the graph relates one way only (no contradicting edge either way), both ends unique
    edges = sorted((s, rel, t) for s, rel, t in lr
                   if s in unique and t in unique and (s, OPPOSITE[rel], t) not in lr and (t, rel, s) not in lr)
    nouns = load_nouns()
    present = {o["name"] for o in objs.values()}
    prone = load_rules().is_unannotated_prone
    absent = [n for n in absent
              if not nouns.names(n, loose=True) & present and nouns.absence_decidable(n) and not prone(n)]
    out = []
    for i in range(k):
        op = ("side", "color", "exists", "relation")[i % 4]
        change = {"kind": "object", "slot": "x", "from": "something"}
        if op in ("side", "color") and unique:
            oid = rng.choice(unique)
            o = objs[oid]
            only = {"fact": "only", "names": [o["name"]], "ids": [oid]}
            change["to"] = o["name"]
            if op == "side":
                centre = o["x"] + o["w"] / 2
                side = "left" if centre < 320 else "right"
                facts = [only, {"fact": "side", "id": oid, "x": o["x"], "w": o["w"], "image_width": 640,
                                "center": centre, "side": side}]
                out.append(("left" if side == "right" else "right",
                            _p(f"On which side is the {o['name']}?", {"op": "side", "object": oid}, facts, side,
                               change)))
            else:
                facts = [only, {"fact": "color", "id": oid, "colors": [o["attributes"][0]]}]
                out.append(("purple", _p(f"What color is the {o['name']}?", {"op": "color", "object": oid}, facts,
                                         o["attributes"][0], change)))
        elif op == "relation" and edges:
            s, rel, t = rng.choice(edges)
            query = {"op": "relation", "subject": s, "rel": OPPOSITE[rel], "object": t, "opposite": rel}
            facts = [{"fact": "relation", "subject": s, "name": rel, "object": t}]
            text = f"Is the {objs[s]['name']} {OPPOSITE[rel]} the {objs[t]['name']}?"
            out.append(("yes", _p(text, query, facts, "no", {"kind": "relation", "slot": "rel", "from": rel,
                                                              "to": OPPOSITE[rel]})))
        elif absent and unique:
            name = rng.choice(absent)
            change["to"] = name
            target = rng.choice(unique)
            query = {"op": "exists_related", "names": [name], "rel": "near", "object": target, "symmetric": True}
            facts = [{"fact": "object", "id": target, "name": objs[target]["name"]},
                     {"fact": "absent", "names": [name]}]
            out.append(("yes", _p(f"Is there a {name} near the {objs[target]['name']}?", query, facts, "no",
                                  change)))
    return out


def _p(question: str, query: dict, facts: list, answer: str, change: dict) -> dict:
    return {"answer": answer, "question": question, "change": change,
            "evidence": {"version": 1, "query": query, "facts": facts, "answer": answer}}


def build(tmp: Path, images: int, per_image: int, seed: int) -> tuple[Path, Path, int]:
    rng = random.Random(seed)
    graphs, records, n = {}, [], 0
    for img in range(images):
        g = make_graph(rng, 20)
        graphs[str(img)] = g
        pairs = perturbations(rng, g, per_image)
        # group consecutive pairs with the same original answer into records of up to 5
        for j in range(0, len(pairs), 5):
            chunk = [p for a, p in pairs[j:j + 5] if a == pairs[j][0]]
            qid = f"{img}-{j}"
            for rank, p in enumerate(chunk, 1):
                p["rank"], p["question_id"] = rank, f"{qid}_{SUFFIX}{rank}"
            records.append({"question_id": qid, "image_id": str(img), "answer": pairs[j][0], "template": TEMPLATE,
                            "perturbations": chunk})
            n += len(chunk)
    out = tmp / "out"
    write_jsonl(out / "contrast_sets.jsonl", records)
    write_json(tmp / "sg.json", graphs)
    return out, tmp / "sg.json", n


def run_command(out: Path, scene_graphs: Path, workers: int | None, source: Path | None) -> dict[str, object]:
    """One `contrastgen verify --json` in a child process: its figures and the report's digest."""
    exe = shutil.which("contrastgen", path=str(Path(sys.executable).parent)) or "contrastgen"
    cmd = [exe, "verify", str(out), "--scene-graphs", str(scene_graphs), "--json", "--no-progress"]
    if workers:
        cmd += ["--workers", str(workers)]
    env = None if source is None else {**os.environ, "PYTHONPATH": str(source)}
    with tempfile.TemporaryFile() as report:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=report, stderr=subprocess.PIPE, env=env)
        sampler = TreeMemorySampler(proc.pid)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        sampler.stop()
        wall = time.perf_counter() - start
        report.seek(0)
        data = report.read()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"contrastgen verify failed with exit code {code}: {proc.stderr.read().decode()[-2000:]}")
    checked = data.split(b'"checked":', 1)[1].split(b",", 1)[0].strip() if b'"checked":' in data else b"?"
    return {"wall_s": round(wall, 1), "cpu_user_s": round(usage.ru_utime, 1), "cpu_sys_s": round(usage.ru_stime, 1),
            "peak_rss_child_gib": round(usage.ru_maxrss / 2**20, 2), "peak_pss_tree_gib": round(sampler.peak_kib / 2**20, 2),
            "checked": checked.decode(), "ok": code == 0, "report_sha256": hashlib.sha256(data).hexdigest()[:16],
            "workers": workers or "default", "host_probe_s": host_probe(), "machine": machine()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=10000)
    ap.add_argument("--per-image", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="time `contrastgen verify` on this generated output instead")
    ap.add_argument("--scene-graphs", type=Path, help="the graphs of --out's run")
    ap.add_argument("--workers", type=int, help="passed to contrastgen verify (default: its own)")
    ap.add_argument("--source", type=Path, help="run this checkout's code (a `git archive` of a revision)")
    args = ap.parse_args()
    if args.out is not None:
        if args.scene_graphs is None:
            ap.error("--out needs --scene-graphs")
        result = run_command(args.out, args.scene_graphs, args.workers, args.source)
        print(" ".join(f"{k}={v}" for k, v in result.items()), flush=True)
        return
    with tempfile.TemporaryDirectory() as d:
        out, sg, n = build(Path(d), args.images, args.per_image, args.seed)
        t0 = time.perf_counter()
        records = list(read_jsonl(out / "contrast_sets.jsonl"))
        graphs = load_scene_graphs(sg)
        t1, c1 = time.perf_counter(), time.process_time()
        report = verify_contrast_sets(records, graphs)
        t2, c2 = time.perf_counter(), time.process_time()
    # CPU time as well as wall time: on a shared machine the wall clock also measures the neighbours.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"{n} perturbations over {args.images} images: load {t1 - t0:.2f} s, "
          f"verify {t2 - t1:.2f} s wall / {c2 - c1:.2f} s CPU ({n / (c2 - c1):,.0f} perturbations per CPU-s); "
          f"peak RSS {peak:.2f} GiB (this process, the set built here included); host probe {host_probe()} s; "
          f"ok={report.ok} failures={len(report.failures)}")
    if not report.ok:  # a figure from a run that did not check valid data is no figure
        for f in report.failures[:5]:
            print(f"  {f.perturbation_id}: {f.problem}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
