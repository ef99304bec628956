"""A program pasted without its imports (issue 26, item 7) gets the findings
it gets with them: the conventional aliases (`tf`, `np`) are presumed by
every recipe's text gate and by the semantic model. Two labelled programs
of the team corpus per recipe, their import lines blanked (line numbers
kept), through the engine with every recipe."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from migrate.engine import transform
from migrate.options import Options
from migrate.registry import all_recipes

CORPUS = Path(__file__).resolve().parent / "corpus"
SAMPLE = (
    "seed000/accumulator/axis1_time_encoder.py", "seed000/accumulator/empty_like_rows.py",
    "seed000/sample_loops/append_slices_in_call.py", "seed000/sample_loops/per_sample_tensorarray.py",
    "seed000/unused/script_spare_model.py",
    "seed003/per-step-tape/assigned_inside_tape.py", "seed003/per-step-tape/convert_in_watch.py",
    "seed003/scalar-target/class_index_local.py", "seed003/scalar-target/ig_target_class_param.py",
    "seed003/suffix-mixup/bare_digit_gradients.py", "seed003/suffix-mixup/image_text_words.py",
    "seed003/typed-convert/annotated_tensor_param.py", "seed003/typed-convert/cast_two_lines_later.py",
)
_IMPORT = re.compile(r"^(import |from \S+ import )")


def _findings(text: str, path: str) -> set:
    result = transform(text, path, Options(tuple(all_recipes().values()), unsafe_fixes=True, isolated=True))
    return {(d.recipe, d.line, d.safety, d.fixable) for d in result.diagnostics}


@pytest.mark.parametrize("name", SAMPLE)
def test_a_program_without_its_imports_keeps_its_findings(name):
    text = (CORPUS / name).read_text(encoding="utf-8")
    pasted = "".join("\n" if _IMPORT.match(line) else line for line in text.splitlines(True))
    assert pasted != text
    found = _findings(text, name)
    assert found, "the sample program has a finding to keep"
    assert _findings(pasted, name) == found
