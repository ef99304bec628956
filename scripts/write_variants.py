"""Write a variant family's programs (tests/variants) to a folder, to score
with ``scripts/corpus_score.py`` and run with ``tf-migrate verify``.

    python scripts/write_variants.py /tmp/v                       # every family, every program
    python scripts/write_variants.py /tmp/v --family typed-convert --sample 60 --seed 1
    python scripts/corpus_score.py /tmp/v/typed-convert --verify
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # tests import it as `variants`, so does this

from variants import all_programs, families, sample  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--family", action="append", help="a FAMILY name (repeatable; default: all)")
    parser.add_argument("--sample", type=int, help="a fixed-seed sample of this many programs per family")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    known = families()
    chosen = args.family or sorted(known)
    for name in chosen:
        if name not in known:
            parser.error(f"unknown family {name!r}; known: {', '.join(sorted(known))}")
        programs = sample(list(all_programs(known[name])), args.sample, args.seed)
        folder = args.dest / name
        folder.mkdir(parents=True, exist_ok=True)
        for program in programs:
            (folder / f"{program.name}{program.suffix}").write_text(program.source, encoding="utf-8")
        misses = sum(p.near_miss for p in programs)
        print(f"{name}: {len(programs)} programs ({misses} near-misses) in {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
