"""The viewer at scale: build a static site of N contrast sets and time its first paint in headless
Chromium (Debian's), opened from disk.

Sets: a real output of the bundled sample (`--mode both`), repeated under new ids to N (the page's
cost depends on the count and size of the sets, not on their variety). Figures: the site's build
time and size, then, per page load, the time from navigation to the first set painted (image
boxes or drawing, questions, evidence) and to the index loaded (filters and search usable), and a
filter applied over all N.

    python benchmarks/bench_viewer.py [--sets 100000] [--loads 3]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import orjson
from cdp_pipe import PipeBrowser, find_chromium

from contrastgen.engine import Engine
from contrastgen.resources import sample_dir
from contrastgen.run.generate import generate
from contrastgen.viewer.bundle import ViewerInputs
from contrastgen.viewer.site import write_site

PAINTED = "document.getElementById('detail').dataset.set"


def sets_of(n: int) -> tuple[list[dict], dict]:
    sample = sample_dir()
    questions = orjson.loads((sample / "questions.json").read_bytes())
    graphs = orjson.loads((sample / "scene_graphs.json").read_bytes())
    base = generate(questions, graphs, engine=Engine.load(), workers=1, mode="both").records
    out = []
    for i in range(n):
        rec = orjson.loads(orjson.dumps(base[i % len(base)]))
        suffix = f"r{i // len(base)}"
        rec["question_id"] = f"{rec['question_id']}{suffix}"
        for p in rec["perturbations"]:
            p["question_id"] = f"{p['question_id']}{suffix}"
        out.append(rec)
    return out, graphs


def wait_for(browser: PipeBrowser, session: str, check: str) -> float:
    """Milliseconds from the page's navigation start until `check` holds (polled every 5 ms)."""
    return browser.evaluate(session, f"""
        new Promise(resolve => {{
          const poll = () => {{ let v; try {{ v = {check}; }} catch (e) {{ v = null; }}
            if (v) resolve(performance.now()); else setTimeout(poll, 5); }};
          poll();
        }})""")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--loads", type=int, default=3)
    args = ap.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    records, graphs = sets_of(args.sets)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        t0 = time.perf_counter()
        index = write_site(ViewerInputs(records=records, scene_graphs=graphs), site)
        build = time.perf_counter() - t0
        files = [p for p in site.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        first_page = (site / "data" / "page-00000.js").stat().st_size
        rows = (site / "data" / "index.js").stat().st_size
        print(f"{args.sets:,} sets: site built in {build:.1f} s, {size / 2**20:.1f} MiB in {len(files):,} files "
              f"(first page {first_page / 1024:.0f} KiB, index {rows / 2**20:.1f} MiB); "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
        paints, indexed, filtered = [], [], []
        for load in range(args.loads):
            browser = PipeBrowser(chromium, Path(tmp) / f"profile-{load}")
            try:
                session = browser.open_page(index.as_uri())
                paints.append(wait_for(browser, session, PAINTED))
                indexed.append(wait_for(browser, session, "CG.rows && CG.list"))
                filtered.append(browser.evaluate(session, """(() => { const t = performance.now();
                    const s = document.getElementById('f-change'); s.value = '2';
                    s.dispatchEvent(new Event('change')); return performance.now() - t; })()"""))
                errors = browser.errors()
                if errors:
                    print("page errors:", errors, file=sys.stderr)
                    return 1
            finally:
                browser.close()
    print(f"first paint: median {statistics.median(paints):.0f} ms (loads: {', '.join(f'{p:.0f}' for p in paints)})")
    print(f"index loaded (filters and search usable): median {statistics.median(indexed):.0f} ms")
    print(f"a filter over all {args.sets:,} sets: median {statistics.median(filtered):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
