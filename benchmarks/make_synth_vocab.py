"""Build benchmarks/synth_vocab.json from the Visual Genome vocabulary.

Why a build step: the synthetic generator must work where ../shared is absent (a user's clone, the
lead's property tests), so the vocabulary it draws from ships inside the package. This script is
the only place that reads the raw VG lists; rerun it after editing synth_vocab_spec.yaml.

    .venv/bin/python benchmarks/make_synth_vocab.py --vocab ../shared/data/vocab/vg-1750-700-450
"""

from __future__ import annotations

import argparse
from pathlib import Path

import inflect
import yaml

from contrastgen.jsonio import write_json

SPEC = Path(__file__).resolve().with_name("synth_vocab_spec.yaml")
OUT = Path(__file__).resolve().with_name("synth_vocab.json")


def _lines(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _is_plural(name: str, known: set[str], plural_only: set[str], engine: inflect.engine) -> bool:
    """Whether a scene-graph name is already a plural form ("jeans", "men", "skis")."""
    if name in plural_only:
        return True
    singular = engine.singular_noun(name)
    return bool(singular) and singular != name and (
        singular in known or (name.endswith("s") and not name.endswith(("ss", "us", "is")))
    )


def _plural(name: str, known: set[str], fixed: set[str], engine: inflect.engine) -> str:
    """The form GQA uses in "Do you see Xs or Ys?": already-plural and mass nouns stay as they are."""
    if name in fixed:
        return name
    singular = engine.singular_noun(name)
    if singular and singular != name and (
        singular in known or (name.endswith("s") and not name.endswith(("ss", "us", "is")))
    ):
        return name
    return engine.plural_noun(name)


def build(vocab_dir: Path) -> dict:
    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    forms: dict[str, str] = spec["surface_forms"]
    names: list[str] = []
    for lemma in _lines(vocab_dir / "objects_vocab.txt"):
        name = forms.get(lemma, lemma)
        if name not in names:
            names.append(name)
    # Names the spec relies on (people, clothing, held objects) must be drawable even if VG spells
    # them differently; append the missing ones at the rare end of the Zipf ranking.
    for group in ("people", "clothing", "held"):
        for name in spec[group]:
            if name not in names:
                names.append(name)
    known = set(names)
    uncountable = set(spec["uncountable"])
    fixed = uncountable | set(spec["plural_only"])
    engine = inflect.engine()
    return {
        "about": (
            "Vocabulary for synth: object names in Visual Genome frequency order "
            "(../shared/data/vocab/vg-1750-700-450, CC BY 4.0; lemmas mapped to GQA surface forms) with "
            "plurals, plus the hand-curated groups of benchmarks/synth_vocab_spec.yaml. "
            "Regenerate with benchmarks/make_synth_vocab.py."
        ),
        "names": names,
        "plurals": {n: _plural(n, known, fixed, engine) for n in names},
        "uncountable": sorted(uncountable),
        "plural_only": sorted(spec["plural_only"]),
        "plural_names": [n for n in names if n not in uncountable
                         and _is_plural(n, known, set(spec["plural_only"]), engine)],
        "vg_attributes": _lines(vocab_dir / "attributes_vocab.txt"),
        "attributes": spec["attributes"],
        "people": spec["people"],
        "clothing": spec["clothing"],
        "held": spec["held"],
        "spatial": spec["spatial"],
        "symmetric": spec["symmetric"],
        "semantic": spec["semantic"],
        "places": spec["places"],
        "weather": spec["weather"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=Path, required=True, help="Visual Genome's vg-1750-700-450 directory")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if not (args.vocab / "objects_vocab.txt").is_file():
        raise SystemExit(f"no Visual Genome vocabulary at {args.vocab}")
    write_json(args.out, build(args.vocab), indent=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
