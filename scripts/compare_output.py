"""Does a change keep every answer? Run `check` with two checkouts of
tf-migrate over the same trees and compare stdout, stderr and exit code.

A speed change must not change output: this runs
``python -P -m migrate check --no-cache --isolated --format FORMAT TREE``
(or ``diff --unsafe-fixes``, every rewrite, with ``--diff``) once with ``--base``'s code and once with this checkout's (PYTHONPATH picks
the code; ``-P`` keeps the working directory off ``sys.path``), from the same
working directory, so paths in the output are the same.

Trees: fixtures/, tests/corpus/, the installed tf_keras, and every folder of
``--real`` (the unzipped wheels of tf-models-official, alibi, tf-explain,
keras-hub) when it exists. Exit 1 when any run differs.

Usage: python scripts/compare_output.py --base DIR [--format json|text | --diff] [--real DIR] [TREE ...]
       (make DIR with `git archive REV | tar -x -C DIR`)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

ROOT = Path(__file__).resolve().parents[1]


def default_trees(real: Path) -> List[Path]:
    trees = [ROOT / "fixtures", ROOT / "tests" / "corpus"]
    spec = importlib.util.find_spec("tf_keras")  # found, not imported (that would import TensorFlow)
    if spec is None or spec.origin is None:
        print("compare_output: tf_keras is not installed: not compared", file=sys.stderr)
    else:
        trees.append(Path(spec.origin).parent)
    if real.is_dir():
        trees.extend(sorted(p for p in real.iterdir() if p.is_dir()))
    return trees


def run(code: Path, tree: Path, command: List[str]) -> Tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(code))
    done = subprocess.run([sys.executable, "-P", "-m", "migrate", *command, "--no-cache", "--isolated", str(tree)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the other checkout's folder")
    parser.add_argument("--format", default="json", choices=["json", "text"])
    parser.add_argument("--diff", action="store_true", help="compare `diff --unsafe-fixes` instead")
    parser.add_argument("--real", type=Path, default=Path("/work/real/src"))
    parser.add_argument("trees", nargs="*", type=Path)
    args = parser.parse_args()
    command = ["diff", "--unsafe-fixes"] if args.diff else ["check", "--format", args.format]
    unit = "lines" if args.diff or args.format == "text" else "findings"
    differ = 0
    for tree in args.trees or default_trees(args.real):
        base, ours = run(args.base.resolve(), tree, command), run(ROOT, tree, command)
        same = base == ours
        differ += not same
        count = ours[1].count('"recipe": ') if unit == "findings" else ours[1].count("\n")
        print(f"{'same' if same else 'DIFFERENT'}  exit {ours[0]}  {count:5d} {unit}  {tree}")
        if not same:
            for name, a, b in zip(("exit", "stdout", "stderr"), base, ours):
                if a != b:
                    print(f"    {name} differs")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
