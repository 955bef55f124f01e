"""Every command block of the README and docs/ runs as written, or says why it does not.

Why: a page is a newcomer's first program. A block that names an input nobody has after cloning,
or a flag that no longer exists, fails on the first try and the reader stops there. So each
fenced ```bash / ```sh / ```console block of README.md and docs/*.md is run here with bash
(`set -eu -o pipefail`) in the test's own folder, which holds a copy of the bundled samples at
`contrastgen/data/sample` and `contrastgen/data/sample_clevr` and of `benchmarks/`, and links to
`.venv` and (when it is there) `../shared`, so every path a page writes resolves as it does in
a checkout. A block sees what the page's earlier blocks made and set (`S=...`, `out/sample`): those
that run are replayed before it, as a reader would have typed them.

A block that cannot run here is listed in `tests/data/docs_blocks_not_run.yaml` with its reason
and the words of the block that make it so (`because`); a listing whose words the block no longer
holds, or that names no block, fails, and so does an unlisted block that fails. Blocks that read
`../shared` run when it is present and skip, saying so, when it is not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO / ".." / "shared"
PAGES = ("README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")))
NOT_RUN = REPO / "tests" / "data" / "docs_blocks_not_run.yaml"
SAMPLES = ("contrastgen/data/sample", "contrastgen/data/sample_clevr")
SHELLS = ("bash", "sh", "console")
FENCE = re.compile(r"^(\s*)```+\s*([\w-]*)")
TIMEOUT = 300  # seconds a block may take (its page's earlier blocks included), on a busy host
# Tools a block may call that a machine may lack; such a block skips, naming the tool.
TOOLS = ("jq", "curl", "openssl")


@dataclass(frozen=True)
class Block:
    """One fenced command block: its page, the line its fence opens on, its commands."""

    page: str
    line: int
    text: str

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class NotRun:
    """A listed block: `block` is words that pick it out on its page, `because` words (a regex)
    the block must hold for `reason` to be true, `exit` the status it ends with when it runs but
    is meant to fail (a page showing a refusal)."""

    page: str
    block: str
    reason: str
    because: str
    exit: int | None = None


def commands_of(lang: str, lines: list[str]) -> str:
    """The shell text of a block; a console block's commands are its `$ ` lines (and the lines
    a trailing backslash continues), the rest being their output."""
    if lang != "console":
        return "\n".join(lines)
    out, continued = [], False
    for line in lines:
        if continued or line.startswith("$ "):
            out.append(line if continued else line[2:])
            continued = line.endswith("\\")
    return "\n".join(out)


def blocks_of(page: str) -> list[Block]:
    """Every shell block of `page`, in order (indented fences, as in lists, count too)."""
    found: list[Block] = []
    lines = (REPO / page).read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2).lower(), i + 1
        i += 1
        body = []
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        if lang in SHELLS:
            found.append(Block(page, start, commands_of(lang, body)))
    return found


BLOCKS = [b for page in PAGES for b in blocks_of(page)]


def load_not_run() -> list[NotRun]:
    rows = yaml.safe_load(NOT_RUN.read_text(encoding="utf-8"))
    return [NotRun(**row) for row in rows]


LISTED = load_not_run()


def listing_of(block: Block) -> NotRun | None:
    hits = [n for n in LISTED if n.page == block.page and n.block in block.text]
    assert len(hits) <= 1, f"{block.name} is listed {len(hits)} times in {NOT_RUN.name}"
    return hits[0] if hits else None


def runs_here(block: Block) -> bool:
    """Whether the block is run by this test (listed blocks with an `exit` run too)."""
    n = listing_of(block)
    return n is None or n.exit is not None


def workspace(tmp_path: Path) -> Path:
    """A folder laid out as a checkout's top: the samples and the benchmark scripts copied
    (a block may write beside them, and a script writes where it lives), the environment
    linked, `../shared` linked when present."""
    top = tmp_path / "repo"
    for sample in SAMPLES:
        shutil.copytree(REPO / sample, top / sample)
    shutil.copytree(REPO / "benchmarks", top / "benchmarks",
                    ignore=shutil.ignore_patterns(".cache", "__pycache__"))
    (top / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    if SHARED.is_dir():
        (tmp_path / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
    (tmp_path / "tmp").mkdir()
    return top


def script_of(block: Block, before: list[Block], tmp: Path) -> str:
    """The bash script: the page's earlier runnable blocks, then this one. Absolute /tmp paths
    go to the test's own folder, so parallel runs and the host's /tmp never meet."""
    parts = ["set -eu -o pipefail"]
    for earlier in before:
        n = listing_of(earlier)
        if n is not None and n.exit:
            parts += ["set +e", earlier.text, "set -e"]
        else:
            parts.append(earlier.text)
    parts.append(f"echo '>>> {block.name}' >&2")
    parts.append(block.text)
    return re.sub(r"(?<![\w./])/tmp/", f"{tmp}/", "\n".join(parts) + "\n")


def test_every_listing_names_one_block_and_its_reason_still_holds():
    problems = []
    for n in LISTED:
        hits = [b for b in BLOCKS if b.page == n.page and n.block in b.text]
        if len(hits) != 1:
            problems.append(f"{n.page}: {n.block!r} picks out {len(hits)} blocks, not one")
        elif not re.search(n.because, hits[0].text):
            problems.append(f"{hits[0].name}: listed as {n.reason!r}, but it no longer holds "
                            f"{n.because!r}: run it, or list why not")
    assert not problems, "stale entries in " + NOT_RUN.name + ":\n" + "\n".join(problems)


def test_the_pages_have_blocks_to_run():
    """Guards the extraction itself: were it to find nothing, every other test would pass."""
    assert len(BLOCKS) >= 40 and sum(runs_here(b) for b in BLOCKS) >= 15


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_block_runs_as_written(block: Block, tmp_path: Path):
    n = listing_of(block)
    if n is not None and n.exit is None:
        pytest.skip(f"not run: {n.reason}")
    if "../shared" in block.text and not SHARED.is_dir():
        pytest.skip(f"needs ../shared/data ({SHARED.resolve()}), absent here")
    missing = [t for t in TOOLS if re.search(rf"(^|[|;&(]\s*|\n\s*){t}\b", block.text)
               and shutil.which(t) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}, not installed here")
    before = [b for b in BLOCKS if b.page == block.page and b.line < block.line and runs_here(b)]
    top = workspace(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "MPLBACKEND": "Agg", "TMPDIR": str(tmp_path / "tmp")}
    env.pop("CONTRASTGEN_API_TOKEN", None)
    started = time.monotonic()
    try:
        run = subprocess.run(["bash", "-c", script_of(block, before, tmp_path / "tmp")], cwd=top,
                             env=env, capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.name} ran over {TIMEOUT} s; make it faster or list why it is not run")
    took = time.monotonic() - started
    err = run.stderr.decode("utf-8", "replace")
    ours = err.rsplit(f">>> {block.name}\n", 1)
    expected = 0 if n is None else n.exit
    if len(ours) == 1:
        pytest.fail(f"an earlier block of {block.page} failed (exit {run.returncode}) before "
                    f"{block.name} ran:\n{err[-3000:]}")
    assert run.returncode == expected, (
        f"{block.name} exited {run.returncode} (expected {expected}) after {took:.1f} s:\n"
        f"{block.text}\n--- stderr ---\n{ours[1][-3000:]}\n--- stdout ---\n"
        f"{run.stdout.decode('utf-8', 'replace')[-2000:]}")
