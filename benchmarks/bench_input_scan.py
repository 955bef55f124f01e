"""What the input limits cost: the scan of the raw bytes next to orjson's parse of the same bytes.

Reads a JSON file whole (`read_json`: scan, parse, keys-given-twice check) and, written out as
JSON lines, line by line (`read_jsonl`), and prints the CPU seconds of each against orjson alone
on the same bytes (best of --repeat runs).

    .venv/bin/python benchmarks/bench_input_scan.py ../shared/data/vqa-vs/Val-Ans.json \
        [--streamed benchmarks/.cache/kill-600-20000/questions.json]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import orjson

from contrastgen.files.limits import scan_bytes
from contrastgen.jsonio import read_json, read_jsonl


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path, help="a JSON file whose top level is a list or an object")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--streamed", type=Path, help="also time the streamed GQA reader on this question file")
    args = parser.parse_args()
    data = args.file.read_bytes()
    value = orjson.loads(data)
    rows = value if isinstance(value, list) else [{k: v} for k, v in value.items()]
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "rows.jsonl"
        lines.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
        line_bytes = lines.read_bytes()
        figures = {
            "whole file: orjson alone": best(lambda: orjson.loads(data), args.repeat),
            "whole file: the scan alone": best(lambda: scan_bytes(data, None), args.repeat),
            "whole file: read_json": best(lambda: read_json(args.file), args.repeat),
            "JSON lines: orjson per line": best(lambda: [orjson.loads(x) for x in line_bytes.splitlines()],
                                                args.repeat),
            "JSON lines: read_jsonl": best(lambda: sum(1 for _ in read_jsonl(lines)), args.repeat),
        }
    if args.streamed is not None:
        from contrastgen.datasets.streaming import stream_records
        n = len(args.streamed.read_bytes()) / 2**20
        seconds = best(lambda: sum(1 for _ in stream_records(args.streamed, "question")), args.repeat)
        print(f"{args.streamed.name}: {n:.1f} MiB streamed (stream_records) in {seconds:.3f} s "
              f"({n / seconds:.0f} MiB/s)")
    size = len(data) / 2**20
    print(f"{args.file.name}: {size:.1f} MiB, {len(rows):,} records; CPU seconds, best of {args.repeat}")
    for name, seconds in figures.items():
        print(f"  {name:<30} {seconds:6.3f} s  ({size / seconds:6.0f} MiB/s)")


if __name__ == "__main__":
    main()
