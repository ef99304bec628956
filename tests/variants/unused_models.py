"""Variants of unused-model-instance: a Keras object built for nothing, in
every model style, import spelling and place, and the near-misses whose
building matters or whose name is read.

Each program defines ``training_case()`` (the model it trains) and
``outputs()`` (its predictions, and what a registry holds), so a removal is
checked by running the before and the after: the after must train and give
the same outputs. Labels (``# expect: unused-model-instance <kind>``) sit on
the unused assignment:

- safe: a spare subclassed model, a spare layer built after the model, a
  layer of a module class whose ``__init__`` touches only ``self``;
- unsafe: a ``Sequential`` given its input shape (it builds weights, drawing
  from the random state later layers use), a functional model whose layer
  calls make weights, a class whose ``__init__`` prints or counts instances
  in a class attribute, a layer whose removal renames a layer looked up by
  its auto-generated name;
- near-misses (no finding): a class that registers each instance in a
  module list (the instance is used through it), a name that is read, a
  name read through ``locals()`` / ``globals()``, a name in ``__all__``.
"""

from __future__ import annotations

import itertools
import textwrap
from typing import Dict, Iterator, Optional, Tuple

from . import Program, notebook

FAMILY = "unused-model-instance"

# spelling -> (import lines, layers, Model, Sequential, Input, backend)
SPELLINGS: Dict[str, Tuple[str, ...]] = {
    "tfkeras": ("", "tf.keras.layers", "tf.keras.Model", "tf.keras.Sequential", "tf.keras.Input",
                "tf.keras.backend"),
    "fromtf": ("from tensorflow import keras\n", "keras.layers", "keras.Model", "keras.Sequential",
               "keras.Input", "keras.backend"),
    "keras": ("import keras\n", "keras.layers", "keras.Model", "keras.Sequential", "keras.Input",
              "keras.backend"),
    "tf_keras": ("import tf_keras\n", "tf_keras.layers", "tf_keras.Model", "tf_keras.Sequential",
                 "tf_keras.Input", "tf_keras.backend"),
    "fromimports": ("from tensorflow.keras import Input, Model, Sequential, backend, layers\n",
                    "layers", "Model", "Sequential", "Input", "backend"),
}
STYLES = ("sequential", "functional", "subclassed", "trainstep")
# variant -> expected kind (None: a near-miss)
VARIANTS: Dict[str, Optional[str]] = {
    "sparemodel": "safe",
    "sparelayer": "safe",
    "pureclass": "safe",
    "shapedfirst": "unsafe",
    "printing": "unsafe",
    "counting": "unsafe",
    "lookup": "unsafe",
    "registered": None,
    "read": None,
    "dynamic": None,
    "exported": None,
}
CONTEXTS = ("function", "module", "notebook")
DIMENSIONS = {"style": STYLES, "spelling": tuple(SPELLINGS), "variant": tuple(VARIANTS),
              "context": CONTEXTS}

LABEL = "  # expect: unused-model-instance {}"

_CLASSES = '''
REGISTRY = []


class Net({Model}):
    def __init__(self, units=UNITS, **kwargs):
        super().__init__(**kwargs)
        self.hidden = {L}.Dense(units, activation="relu")
        self.out = {L}.Dense(1)

    def call(self, inputs):
        return self.out(self.hidden(inputs))
{train_step}

class Probe({L}.Layer):
    built_count = 0

    def __init__(self, units=UNITS, **kwargs):
        super().__init__(**kwargs)
        self.dense = {L}.Dense(units)
{probe_effect}
    def call(self, inputs):
        return self.dense(inputs)
'''

_TRAIN_STEP = '''
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self(x, training=True)))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
'''

_PROBE_EFFECTS = {
    "printing": '        print("built a probe layer")\n',
    "counting": "        Probe.built_count += 1\n",
    "registered": "        REGISTRY.append(self)\n",
}


def _model(style: str, names: Dict[str, str]) -> str:
    """Statements that bind ``model``."""
    if style == "sequential":
        return ("model = {S}([{I}((FEATURES,)), {L}.Dense(UNITS, activation=\"relu\"), "
                "{L}.Dense(1)])").format(**names)
    if style == "functional":
        return ("inputs = {I}((FEATURES,))\nhidden = {L}.Dense(UNITS, activation=\"relu\")(inputs)\n"
                "model = {M}(inputs, {L}.Dense(1)(hidden))").format(**names)
    return "model = Net()"


def _unused(variant: str, style: str, names: Dict[str, str]) -> Tuple[str, str, str]:
    """(statements before the model, the unused statement after it or "",
    statements reading it): the unused statement carries the label."""
    kind = VARIANTS[variant]
    label = LABEL.format(kind) if kind else ""
    if variant == "sparemodel":
        spare = {"sequential": "spare = {S}([{I}((FEATURES,)), {L}.Dense(2)])",
                 "functional": "spare = {M}(inputs, {L}.Dense(2)(hidden))"}.get(style, "spare = Net(units=2)")
        # a Sequential with its input builds weights; a functional model's layer call makes some
        if style in ("sequential", "functional"):
            label = LABEL.format("unsafe")
        return "", spare.format(**names) + label, ""
    if variant == "sparelayer":
        return "", "probe = {L}.Dense(UNITS)".format(**names) + label, ""
    if variant in ("pureclass", "printing", "counting", "registered"):
        return "", "probe = Probe()" + label, ""
    if variant == "shapedfirst":
        return "spare = {S}([{I}((FEATURES,)), {L}.Dense(2)])".format(**names) + label, "", ""
    if variant == "lookup":
        return ("probe = {L}.Dense(UNITS)".format(**names) + label, "",
                'model.get_layer("dense_1").trainable = True')
    if variant == "read":
        return "", "probe = {L}.Dense(UNITS)".format(**names), "probe.build((None, FEATURES))"
    if variant == "dynamic":
        return "", "probe = {L}.Dense(UNITS)".format(**names), "DYNAMIC"
    return "", "probe = {L}.Dense(UNITS)".format(**names), "EXPORTED"


def _applies(style: str, variant: str) -> bool:
    # auto-named Dense layers of the model follow the probe only when the model has them
    return variant != "lookup" or style in ("sequential", "functional")


def _program(style: str, spelling: str, variant: str, context: str) -> str:
    imports, layers, model_cls, sequential, inputs, backend = SPELLINGS[spelling]
    names = {"L": layers, "M": model_cls, "S": sequential, "I": inputs}
    first, unused, reads = _unused(variant, style, names)
    classes = _CLASSES.format(Model=model_cls, L=layers,
                              train_step=_TRAIN_STEP if style == "trainstep" else "",
                              probe_effect=_PROBE_EFFECTS.get(variant, ""))
    build = [f"{backend}.clear_session()"]
    build += [first] if first else []
    build += _model(style, names).splitlines()
    build += [unused] if unused else []
    if reads == "DYNAMIC":
        reads = "seen = sorted(globals())" if context != "function" else "seen = sorted(locals())"
    elif reads == "EXPORTED":
        reads = '__all__ = ["model", "probe"]' if context != "function" else "return model, probe"
    build += [reads] if reads else []
    doc = (f"unused-model-instance variant: style={style}, spelling={spelling}, "
           f"variant={variant}, context={context}.")
    header = f'"""{doc}"""\nimport random\n\nimport numpy as np\nimport tensorflow as tf\n{imports}'
    constants = "\nBATCH, FEATURES, UNITS = 8, 3, 4\n"
    data = ("random.seed(0)\ntf.random.set_seed(0)\nnp.random.seed(0)\n"
            "x = np.random.rand(BATCH, FEATURES).astype(\"float32\")\n"
            "y = np.random.rand(BATCH, 1).astype(\"float32\")")
    if context == "function":
        body = "\n".join(build)
        if not body.rstrip().splitlines()[-1].startswith("return"):
            body += "\nreturn model"
        returns_pair = "return model, probe" in body
        builder = "def build_model():\n" + textwrap.indent(body, "    ") + "\n"
        made = "build_model()[0]" if returns_pair else "build_model()"
        protocol = (f"\n\ndef training_case():\n{textwrap.indent(data, '    ')}\n"
                    f"    return {made}, x, y\n")
        cells = [header + constants + classes, "\n\n" + builder + protocol]
    else:
        protocol = "\n\ndef training_case():\n    return model, x, y\n"
        cells = [header + constants + classes, "\n\n" + data + "\n" + "\n".join(build) + "\n" + protocol]
    cells.append(
        "\n\ndef outputs():\n    trained, inputs, _ = training_case()\n"
        "    return {\"prediction\": trained(inputs), \"registered\": np.array(len(REGISTRY))}\n")
    if context == "notebook":
        return notebook(cells)
    return "".join(cells)


def generate() -> Iterator[Program]:
    for style, spelling, variant, context in itertools.product(*DIMENSIONS.values()):
        if not _applies(style, variant):
            continue
        if context == "notebook" and spelling != "tfkeras":
            continue  # notebooks: one spelling is enough to cross the other dimensions
        source = _program(style, spelling, variant, context)
        name = f"{style}_{spelling}_{variant}_{context}"
        yield Program(name, source, near_miss=VARIANTS[variant] is None,
                      suffix=".ipynb" if context == "notebook" else ".py")
