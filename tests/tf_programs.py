"""Hypothesis strategies for TensorFlow-shaped programs: the bug patterns of
fixtures/ (a NumPy buffer written in a Keras ``call`` loop, convert_to_tensor
then cast, ``tape.watch(path[i])``, a model output as the gradient target, a
layer built and never used, a mixed-up numbered suffix) with random names,
aliases, spacing, indentation, comments, unrelated statements and blocks
around them, so that the recipes really rewrite what the fuzzer makes.

A snippet is a list of lines indented by four spaces a level; ``render``
re-indents, spaces and comments them.
"""

from __future__ import annotations

import builtins
import keyword
from typing import Callable, Dict, List

from hypothesis import strategies as st

Lines = List[str]
RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {
    "self", "tf", "np", "tnf", "onp", "numpy", "tensorflow", "keras", "layers", "super"}

IDENTIFIERS = st.from_regex(r"\A[a-z][a-z0-9]{0,5}(_[a-z]{1,4})?\Z").filter(
    lambda name: name not in RESERVED)
CLASS_NAMES = st.from_regex(r"\A[A-Z][a-zA-Z0-9]{0,8}\Z").filter(lambda name: name not in RESERVED)
COMMENTS = st.sampled_from(["# shapes: (batch, steps, features)", "# TODO: vectorise",
                            "# noqa", "# keep in sync with the paper", "#", "# é ü"])


def names(count: int) -> st.SearchStrategy[List[str]]:
    """``count`` different identifiers (a repeat gets its position appended)."""
    return st.lists(IDENTIFIERS, min_size=count, max_size=count).map(
        lambda drawn: [name if name not in drawn[:i] else f"{name}{i}"
                       for i, name in enumerate(drawn)])


@st.composite
def accumulator_model(draw, tf: str, np: str) -> Lines:
    """numpy-accumulator: a NumPy buffer filled by a Keras layer in ``call``."""
    model = draw(CLASS_NAMES)
    layer, units, inputs, steps, buffer, t = draw(names(6))
    make = draw(st.sampled_from(["zeros", "empty"]))
    scalar = draw(st.booleans())
    super_call = draw(st.sampled_from(["super().__init__()", f"super({model}, self).__init__()"]))
    shape = f"{steps}" if scalar else f"({steps}, {tf}.shape({inputs})[0], self.{units})"
    value = f"self.{layer}({inputs}[:, {t}, :])"
    if scalar:
        value = f"{tf}.reduce_mean({value})"
    return [
        f"class {model}({tf}.keras.Model):",
        f"    def __init__(self, {units}={draw(st.integers(1, 64))}):",
        f"        {super_call}",
        f"        self.{units} = {units}",
        f"        self.{layer} = {tf}.keras.layers.Dense({units})",
        "",
        f"    def call(self, {inputs}):",
        f"        {steps} = {inputs}.shape[1]",
        f"        {buffer} = {np}.{make}({shape})",
        f"        for {t} in range({steps}):",
        f"            {buffer}[{t}] = {value}",
        f"        return {tf}.reduce_sum({buffer}, axis=0)",
    ]


@st.composite
def typed_convert(draw, tf: str, np: str) -> Lines:
    """typed-convert: convert_to_tensor, then cast (two statements or nested)."""
    function, data, tensor = draw(names(3))
    dtype = f"{tf}.{draw(st.sampled_from(['float32', 'float64', 'float16']))}"
    dtype = draw(st.sampled_from([dtype, f"dtype={dtype}"]))
    from_numpy = draw(st.booleans())
    head = [f"def {function}():" if from_numpy else f"def {function}({data}):"]
    if from_numpy:
        rows = draw(st.lists(st.lists(st.integers(-9, 99), min_size=2, max_size=2),
                             min_size=1, max_size=3))
        head.append(f"    {data} = {np}.array({rows!r})")
    if draw(st.booleans()):
        return head + [f"    return {tf}.cast({tf}.convert_to_tensor({data}), {dtype})"]
    return head + [f"    {tensor} = {tf}.convert_to_tensor({data})",
                   f"    {tensor} = {tf}.cast({tensor}, {dtype})",
                   f"    return {tensor}"]


@st.composite
def watched_slice(draw, tf: str, np: str) -> Lines:
    """per-step-tape: ``tape.watch(batch[row])``, the slice read again later."""
    function, scorer, batch, row, tape, score = draw(names(6))
    return [
        f"def {function}({scorer}, {batch}, {row}):",
        f"    with {tf}.GradientTape() as {tape}:",
        f"        {tape}.watch({batch}[{row}])",
        f"        {score} = {scorer}({batch}[{row}][None, :])[0, 0]",
        f"    return {tape}.gradient({score}, {batch}[{row}]) * {batch}[{row}]",
    ]


@st.composite
def whole_output_target(draw, tf: str, np: str) -> Lines:
    """scalar-target: the gradient of the whole output of a classifier built
    here (a width > 1: the recipe only fixes a provably multi-class output)."""
    function, x, tape, probs = draw(names(4))
    model = draw(st.sampled_from(["model", "net", "classifier", "base_model"]))
    width = draw(st.integers(2, 9))
    return [
        f"def {function}({x}):",
        f"    {model} = {tf}.keras.Sequential([{tf}.keras.layers.Dense({width}, activation='softmax')])",
        f"    with {tf}.GradientTape() as {tape}:",
        f"        {tape}.watch({x})",
        f"        {probs} = {model}({x})",
        f"    return {tape}.gradient({probs}, {x})",
    ]


@st.composite
def unused_layer(draw, tf: str, np: str) -> Lines:
    """unused-model-instance: a layer constructed and never read."""
    function, used, unused = draw(names(3))
    kind = draw(st.sampled_from(["Dense(8)", "Dropout(0.5)", "LayerNormalization()"]))
    return [
        f"def {function}():",
        f"    {used} = {tf}.keras.layers.Dense({draw(st.integers(1, 9))})",
        f"    {unused} = {tf}.keras.layers.{kind}",
        f"    return {tf}.keras.Sequential([{used}])",
    ]


@st.composite
def suffix_mixup(draw, tf: str, np: str) -> Lines:
    """suffix-mixup: the second attribution multiplies by the first input's gradients."""
    function, model, inputs, baseline, gradients, result, tape, out = draw(names(8))
    return [
        f"def {function}({model}, {inputs}_1, {inputs}_2, {baseline}_1, {baseline}_2):",
        f"    with {tf}.GradientTape(persistent=True) as {tape}:",
        f"        {tape}.watch([{inputs}_1, {inputs}_2])",
        f"        {out} = {model}([{inputs}_1, {inputs}_2])",
        f"    {gradients}_1 = {tape}.gradient({out}, {inputs}_1)",
        f"    {gradients}_2 = {tape}.gradient({out}, {inputs}_2)",
        f"    {result}_1 = ({inputs}_1 - {baseline}_1) * {gradients}_1",
        f"    {result}_2 = ({inputs}_2 - {baseline}_2) * {gradients}_1",
        f"    return {result}_1, {result}_2",
    ]


SNIPPETS: Dict[str, Callable] = {
    "numpy-accumulator": accumulator_model, "typed-convert": typed_convert,
    "per-step-tape": watched_slice, "scalar-target": whole_output_target,
    "unused-model-instance": unused_layer, "suffix-mixup": suffix_mixup,
}


@st.composite
def filler(draw) -> str:
    """An unrelated statement, as found between the interesting ones."""
    a, b = draw(names(2))
    return draw(st.sampled_from([
        f"{a} = {draw(st.integers(-5, 500))}", f"print({a!r})", "pass",
        f"{a} = [{b} * 2 for {b} in range(3)]", f"assert {draw(st.booleans())} or True",
        f"{a} = {{'{b}': ({draw(st.integers(0, 9))},)}}",
    ]))


@st.composite
def scattered(draw, lines: Lines) -> Lines:
    """``lines`` with filler statements and comment lines slipped in between
    statements (each at the indentation of the line it precedes)."""
    out: Lines = []
    for line in lines:
        indent = line[: len(line) - len(line.lstrip())]
        if line.strip() and draw(st.integers(0, 9)) == 0:
            out.append(indent + draw(st.one_of(filler(), COMMENTS)))
        out.append(line)
    return out


@st.composite
def nested(draw, lines: Lines) -> Lines:
    """``lines`` as they are, or inside a block of module-level code."""
    header = draw(st.sampled_from([None, None, "if True:", "try:", "if __name__ != '__main__':"]))
    if header is None:
        return lines
    body = [f"    {line}" if line else line for line in lines]
    return [header, *body, *(["except ImportError:", "    raise"] if header == "try:" else [])]


@st.composite
def render(draw, lines: Lines) -> str:
    """Re-indent (2, 4 or 8 spaces a level), respace ``=`` and ``,``, and
    append comments to some lines."""
    unit = draw(st.sampled_from([2, 4, 8]))
    tight_commas = draw(st.booleans())
    out = []
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 4
        text = line.lstrip(" ")
        if tight_commas and not text.startswith("#"):
            text = text.replace(", ", ",")
        if text and not text.startswith("#") and draw(st.integers(0, 7)) == 0:
            text += "  " + draw(COMMENTS)
        out.append(" " * unit * depth + text if text else "")
    return "\n".join(out) + "\n"


@st.composite
def tf_programs(draw) -> str:
    """A module with TensorFlow/NumPy imports under random aliases and one to
    three bug-pattern snippets, in odd company."""
    tf = draw(st.sampled_from(["tf", "tnf", "tensorflow"]))
    np = draw(st.sampled_from(["np", "onp", "numpy"]))
    imports = [f"import numpy as {np}" if np != "numpy" else "import numpy",
               f"import tensorflow as {tf}" if tf != "tensorflow" else "import tensorflow"]
    if draw(st.booleans()):
        imports.reverse()
    lines = [*draw(st.lists(COMMENTS, max_size=1)), *imports]
    kinds = draw(st.lists(st.sampled_from(sorted(SNIPPETS)), min_size=1, max_size=3))
    for kind in kinds:
        snippet = draw(SNIPPETS[kind](tf, np))
        lines += [""] * draw(st.integers(0, 2))
        lines += draw(nested(draw(scattered(snippet))))
        if draw(st.integers(0, 3)) == 0:
            lines.append(draw(filler()))
    return draw(render(lines))
