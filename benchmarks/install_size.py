"""What each of contrastgen's dependencies costs on disk, in the environment that runs this script.

Why a script: a dependency's own wheel is often the smaller part of what it brings; crowd-kit's
pulls in transformers. So each direct dependency is charged its own files plus every package
that only it pulls in; packages two or more of them need are listed apart as shared. Sizes are
the bytes of the files each distribution's RECORD lists (what `du --apparent-size` counts), and
the total is every distribution in the environment, pip and its friends included.

    python3 -m venv /tmp/core && /tmp/core/bin/pip install .
    /tmp/core/bin/python benchmarks/install_size.py                  # the core install
    /tmp/all/bin/python benchmarks/install_size.py --extras crowd,ray,hf,lexicon
"""

from __future__ import annotations

import argparse
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# Installed with the virtual environment itself, not by contrastgen.
TOOLING = {"pip", "setuptools", "wheel"}


def dist_size(dist: metadata.Distribution) -> int:
    """The bytes of the files a distribution installed (its RECORD), as they are on disk."""
    total = 0
    for f in dist.files or []:
        path = Path(str(dist.locate_file(f)))
        if path.is_file():
            total += path.stat().st_size
    return total


def requirements(dist: metadata.Distribution, extras: set[str]) -> list[str]:
    """The names `dist` requires in this environment, with `extras` of it asked for."""
    names = []
    for line in dist.requires or []:
        req = Requirement(line)
        if req.marker is not None:
            wanted = {"extra": ""} if not extras else None
            if wanted is not None and not req.marker.evaluate(wanted):
                continue
            if wanted is None and not any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
                continue
        names.append(canonicalize_name(req.name))
    return names


def closure(root: str, dists: dict[str, metadata.Distribution]) -> set[str]:
    """`root` and every installed distribution it needs, transitively (no extras below the root)."""
    seen, todo = set(), [root]
    while todo:
        name = todo.pop()
        if name in seen or name not in dists:
            continue
        seen.add(name)
        todo.extend(requirements(dists[name], set()))
    return seen


def mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extras", default="", help="contrastgen's extras installed here, e.g. crowd,ray")
    args = ap.parse_args()
    extras = {e for e in args.extras.split(",") if e}
    dists = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()}
    sizes = {name: dist_size(d) for name, d in dists.items()}
    direct = requirements(dists["contrastgen"], extras)
    reach = {name: closure(name, dists) for name in direct}
    owners: dict[str, list[str]] = {}
    for name, deps in reach.items():
        for dep in deps:
            owners.setdefault(dep, []).append(name)
    rows = []
    for name in direct:
        only = sorted(d for d in reach[name] if owners[d] == [name] and d != name)
        rows.append((sizes.get(name, 0) + sum(sizes[d] for d in only), name, only))
    print(f"{'dependency':<22} {'own':>11} {'with what only it needs':>24}  pulled in only by it")
    for with_only, name, only in sorted(rows, reverse=True):
        print(f"{name:<22} {mib(sizes.get(name, 0)):>11} {mib(with_only):>24}  {', '.join(only) or '-'}")
    shared = sorted((d for d, o in owners.items() if len(o) > 1 and d not in direct), key=lambda d: -sizes[d])
    print(f"\nshared by two or more: {mib(sum(sizes[d] for d in shared))}")
    for name in shared:
        print(f"  {name:<20} {mib(sizes[name]):>11}  ({', '.join(sorted(owners[name]))})")
    ours = sizes["contrastgen"]
    everything = sum(s for n, s in sizes.items() if n not in TOOLING)
    print(f"\ncontrastgen itself: {mib(ours)}; the whole install (without pip/setuptools/wheel): {mib(everything)}")


if __name__ == "__main__":
    main()
