"""Variant generators: one module per recipe family, crossing the dimensions
users vary (loop forms, write forms, constructors, spellings, dtypes, model
styles, names) so that recipes are measured on programs nobody wrote for them.

A family module defines:

- ``FAMILY``: its name (``"numpy-accumulator"``, ``"typed-convert"``, ...);
- ``DIMENSIONS``: ``{dimension: (value, ...)}``, what the generator crosses
  (docs/variants.md lists them with the size of the space);
- ``generate()``: every program of the space, as ``Program`` values.

A program is complete and runnable (synthetic data, fixed seeds, the runner
protocol of CONTRIBUTING.md: ``training_case()`` / ``attribution_case()`` /
``outputs()``), and labelled by construction with the corpus grammar of
tests/corpus/README.md: a trailing ``# expect: <recipe> <safe|unsafe|report>``
comment on the line where each finding must start. A program without a label
is a near-miss: it must get no finding, its fixed text must equal it byte for
byte, and its docstring says why it is correct. ``scripts/write_variants.py``
writes a family (or a fixed-seed sample of it) to a folder that
``scripts/corpus_score.py [--verify]`` scores.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import random
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional


@dataclass(frozen=True)
class Program:
    name: str  # unique within its family, a valid file stem: the dimension values joined
    source: str
    near_miss: bool  # True: correct code that must stay byte-identical
    suffix: str = ".py"  # ".ipynb": ``source`` is a notebook's JSON


def notebook(cells: List[str]) -> str:
    """A notebook (``Program.suffix`` ".ipynb") whose code cells are ``cells``."""
    document = {"cells": [{"cell_type": "code", "execution_count": None, "id": f"cell-{number}", "metadata": {},
                           "outputs": [], "source": cell.strip("\n").splitlines(keepends=True)}
                          for number, cell in enumerate(cells)],  # nbformat 4.5 wants an id per cell
                "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1) + "\n"


def families() -> Dict[str, object]:
    """Every family module of this package, by its FAMILY name."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            found[module.FAMILY] = module
    return found


def sample(programs: List[Program], size: Optional[int], seed: int = 0) -> List[Program]:
    """A fixed-seed sample of ``size`` programs (all of them when ``size`` is
    None or not smaller), keeping the near-miss share of the whole."""
    if size is None or size >= len(programs):
        return list(programs)
    rng = random.Random(seed)
    misses = [p for p in programs if p.near_miss]
    bugs = [p for p in programs if not p.near_miss]
    take_misses = round(size * len(misses) / len(programs))
    chosen = rng.sample(misses, take_misses) + rng.sample(bugs, size - take_misses)
    return sorted(chosen, key=lambda p: p.name)


def all_programs(family) -> Iterator[Program]:
    names = set()
    for program in family.generate():
        if program.name in names:
            raise ValueError(f"{family.FAMILY}: two programs named {program.name}")
        names.add(program.name)
        yield program
