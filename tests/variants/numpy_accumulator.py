"""numpy-accumulator variants: a tensor on the gradient path stored into a
NumPy container, in the shapes users write it, and correct code that looks
like it.

Bugs cross every loop form with every write form, each with three of the
constructors (rotated so every constructor meets every loop form), and
rotate the gradient context (with its model style), the dtype and the
import spelling over them. Near-misses cross their kind with loop forms and
contexts or import spellings: NumPy constants or weights written in a
gradient context, correct ``tf.TensorArray`` code beside a NumPy mask,
features computed with ``.numpy()`` or with TensorFlow outside any gradient
context, losses recorded after the tape, a metric history in a callback,
integer ids made in preprocessing.

Every program follows the runner's ``training_case()`` protocol: a bug fails
it before the fix (a ``None`` gradient eagerly, a raise under ``fit``), its
fixed form trains; a near-miss trains as it is.
"""

from __future__ import annotations

import re
import textwrap
from typing import Iterator, List, Optional, Tuple

from variants import Program, notebook

FAMILY = "numpy-accumulator"

LOOPS = ("range", "enumerate", "zip", "tensor", "while", "nested", "none")
WRITES = ("row", "row_colon", "column", "item", "chained", "slice", "add", "sub", "mul")
CONSTRUCTORS = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like",
                "full_like", "array", "asarray", "copy", "helper_function", "helper_method")
CONTEXTS = ("model_call", "layer_call", "helper", "tf_function", "loss", "train_step")
DTYPES = ("default", "float32", "float32_string", "float64")
IMPORTS = ("np", "numpy", "onp", "from")
# Keras 3 code written against keras.ops (no TensorFlow import): its own programs
KERAS3_LOOPS = ("range", "enumerate", "zip", "while", "nested", "none")
KERAS3_CONSTRUCTORS = ("zeros", "ones", "full", "helper_function", "array", "copy")
STYLES = ("sequential", "functional", "subclassed", "train_step")
FORMS = ("script", "notebook")
NEAR_MISSES = ("constant_mask", "numpy_weights", "tensorarray_mask", "numpy_features",
               "preprocessing", "after_tape", "metric_history", "integer_ids")

DIMENSIONS = {
    "loop": LOOPS,
    "write": WRITES,
    "constructor": CONSTRUCTORS,
    "context (model style)": ("model_call (subclassed)", "layer_call (Sequential, functional, subclassed)",
                              "helper (subclassed)", "tf_function (subclassed)",
                              "loss (Sequential, functional)", "train_step (train_step)"),
    "dtype": DTYPES,
    "import": IMPORTS + ("keras3 (keras.ops, no TensorFlow)",),
    "near-miss": NEAR_MISSES,
    # the styles each context meets in _bugs/_near_misses, crossed further by _styled_programs
    "model style": STYLES,
    "form": FORMS,
}

LABEL = "  # expect: numpy-accumulator safe"
# a Python `for` over a tensor in train_step, which Keras does not autograph: no rewrite of the
# buffer makes it run under `fit`
UNCONVERTED = "  # expect: numpy-accumulator report"
# a zero or uninitialised start: `*=` would leave zeros (no loss to lower), `+=` on `empty` garbage
_ZERO_START = ("zeros", "empty", "zeros_like", "empty_like", "asarray", "helper_function", "helper_method")
# a copy of the values then written: `buf[i] -= h[i]` leaves zeros, a loss that cannot go down
_COPIES = ("array", "copy")
_TAKES_DTYPE = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like",
                "array", "asarray")
_DTYPE_TEXT = {"default": "", "float32": ", dtype=np.float32", "float32_string": ", dtype=\"float32\"",
               "float64": ", dtype=np.float64"}


def _write_lines(write: str, i: str, row: str) -> List[str]:
    """The statements writing row ``i`` (value ``row``, shape (W,)); the
    first written line is labelled."""
    one = {
        "row": f"buf[{i}] = {row}",
        "row_colon": f"buf[{i}, :] = {row}",
        "column": f"buf[:, {i}] = {row}",
        "slice": f"buf[{i}:{i} + 1] = tf.expand_dims({row}, 0)",
        "add": f"buf[{i}] += {row}",
        "sub": f"buf[{i}] -= {row}",
        "mul": f"buf[{i}] *= {row}",
    }
    if write in one:
        return [one[write]]
    target = f"buf[{i}, j]" if write == "item" else f"buf[{i}][j]"
    return ["for j in range(W):", f"    {target} = {row}[j]"]


def _loop_lines(loop: str, write: str) -> List[str]:
    if loop == "none":
        return [line for i in range(3) for line in _write_lines(write, str(i), f"h[{i}]")]
    heads = {
        "range": ("for i in range(B):", "h[i]"),
        "enumerate": ("for i, row in enumerate(tf.unstack(h, num=B)):", "row"),
        "zip": ("for i, row in zip(range(B), tf.unstack(h, num=B)):", "row"),
        "tensor": ("for i in tf.range(B):", "h[i]"),
        "nested": ("for i in range(B):", "h[i]"),
    }
    if loop == "while":
        return ["i = 0", "while i < B:"] + [f"    {s}" for s in _write_lines(write, "i", "h[i]")] + ["    i += 1"]
    head, row = heads[loop]
    body = [head] + [f"    {s}" for s in _write_lines(write, "i", row)]
    if loop == "nested":  # the rows filled again by a second pass: the last one stays
        body = ["for _ in range(2):"] + [f"    {s}" for s in body]
    return body


def _label_first_write(lines: List[str], label: str = LABEL) -> List[str]:
    for at, line in enumerate(lines):
        if line.lstrip().startswith("buf["):
            return lines[:at] + [line + label] + lines[at + 1:]
    raise ValueError("no write")


def _constructor(constructor: str, write: str, dtype: str) -> str:
    shape = "(W, B)" if write == "column" else "(B, W)"
    base = "tf.transpose(h)" if write == "column" else "h"
    dt = _DTYPE_TEXT[dtype] if constructor in _TAKES_DTYPE else ""
    rows, width = ("W", "B") if write == "column" else ("B", "W")
    return {
        "zeros": f"np.zeros({shape}{dt})",
        "empty": f"np.empty({shape}{dt})",
        "ones": f"np.ones({shape}{dt})",
        "full": f"np.full({shape}, 0.5{dt})",
        "zeros_like": f"np.zeros_like({base}{dt})",
        "empty_like": f"np.empty_like({base}{dt})",
        "ones_like": f"np.ones_like({base}{dt})",
        "full_like": f"np.full_like({base}, 0.5{dt})",
        "array": f"np.array({base}{dt})",
        "asarray": f"np.asarray([[0.0] * {width}] * {rows}{dt})",
        "copy": f"np.copy({base})",
        "helper_function": f"make_buffer({shape[1:-1]})",
        "helper_method": f"self.make_buffer({shape[1:-1]})",
    }[constructor]


_HELPER_FUNCTION = '''
def make_buffer(n, m):
    return np.zeros((n, m))
'''
_HELPER_METHOD = '''
    def make_buffer(self, n, m):
        return np.zeros((n, m))
'''


def _indent(lines: List[str], by: int) -> str:
    return textwrap.indent("\n".join(lines), " " * by) + "\n"


def _program(context: str, style: str, body: List[str], use: str, helpers: str = "",
             method: str = "", extra: str = "", main: str = "") -> str:
    """A complete program whose gradient ``context`` runs ``body`` (which
    reads ``h``, a (B, W) tensor on the gradient path) and returns ``use``."""
    width = "1" if context in ("loss", "train_step") else "2"
    head = f"import numpy as np\nimport tensorflow as tf\n\nB, F, W = 3, 4, {width}\n{helpers}{extra}"
    cast = f"tf.cast({use}, tf.float32)"
    if context == "model_call":
        code = f'''

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(W)
        self.head = tf.keras.layers.Dense(1)
{method}
    def call(self, x):
        h = self.enc(x)
{_indent(body, 8)}        return self.head({cast})


def build():
    return Net(), None
'''
    elif context == "layer_call":
        model = {
            "sequential": "tf.keras.Sequential([Pool(), tf.keras.layers.Dense(1)])",
            "functional": "functional()",
            "subclassed": "Wrapper()",
        }[style]
        code = f'''

class Pool(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(W)
{method}
    def call(self, x):
        h = self.enc(x)
{_indent(body, 8)}        return {cast}


def functional():
    inputs = tf.keras.Input((F,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(Pool()(inputs)))


class Wrapper(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.pool = Pool()
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.pool(x))


def build():
    return {model}, None
'''
    elif context in ("helper", "tf_function"):
        decorator = "@tf.function\n" if context == "tf_function" else ""
        code = f'''

{decorator}def pool(h):
{_indent(body, 4)}    return {cast}


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(W)
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.head(pool(self.enc(x)))


def build():
    return Net(), None
'''
    elif context == "loss":
        model = ("tf.keras.Sequential([tf.keras.layers.Dense(3, activation=\"tanh\"), tf.keras.layers.Dense(1)])"
                 if style == "sequential" else "functional()")
        code = f'''

def pooled_mse(y_true, y_pred):
    h = y_pred
{_indent(body, 4)}    return tf.reduce_mean(tf.square(y_true - {cast}))


def functional():
    inputs = tf.keras.Input((F,))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(tf.keras.layers.Dense(3, activation="tanh")(inputs)))


def build():
    model = {model}
    model.compile(optimizer="sgd", loss=pooled_mse)
    return model, pooled_mse
'''
    else:  # train_step
        code = f'''

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(3, activation="tanh")
        self.head = tf.keras.layers.Dense(1)
{method}
    def call(self, x):
        return self.head(self.enc(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            h = self(x, training=True)
{_indent(body, 12)}            loss = tf.reduce_mean(tf.square(y - {cast}))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}


def build():
    return Net(), None
'''
    return head + code + f'''

def training_case():
    tf.random.set_seed(0)
    np.random.seed(0)
    x = np.random.rand(B, F).astype("float32")
    y = np.random.rand(B, 1).astype("float32")
    model, loss = build()
    model(x)
    return (model, x, y) if loss is None else (model, x, y, loss)
{main}'''


def _spell(source: str, spelling: str) -> str:
    """``np.`` as the import spelling says: ``numpy.``, ``onp.`` or names imported from NumPy."""
    if spelling == "np":
        return source
    if spelling in ("numpy", "onp"):
        prefix = "numpy" if spelling == "numpy" else "onp"
        source = re.sub(r"(?<![\w.])np\.", f"{prefix}.", source)
        return source.replace("import numpy as np", "import numpy" if spelling == "numpy" else "import numpy as onp")
    used = sorted(set(re.findall(r"(?<![\w.])np\.(\w+)", source)))
    source = re.sub(r"(?<![\w.])np\.(\w+)", r"\1", source)
    return source.replace("import numpy as np", f"from numpy import {', '.join(used)}")


def _style(context: str, at: int) -> str:
    styles = {"layer_call": ("sequential", "functional", "subclassed"), "loss": ("sequential", "functional")}
    options = styles.get(context, ("subclassed",))
    return options[at % len(options)]


def _bugs() -> Iterator[Program]:
    at = 0
    for li, loop in enumerate(LOOPS):
        for wi, write in enumerate(WRITES):
            chosen = []
            k = li * 3 + wi * 5
            while len(chosen) < 3:
                constructor = CONSTRUCTORS[k % len(CONSTRUCTORS)]
                k += 1
                if write == "mul" and constructor in _ZERO_START or write in ("add", "sub") \
                        and constructor in ("empty", "empty_like") or write == "sub" and constructor in _COPIES:
                    continue  # zeros stay zeros; garbage; `h - h` is a constant loss
                chosen.append(constructor)
            for constructor in chosen:
                context = CONTEXTS[at % len(CONTEXTS)]
                if constructor == "helper_method" and context in ("helper", "tf_function", "loss"):
                    context = "model_call"
                style = _style(context, at // len(CONTEXTS))
                dtype = DTYPES[at % len(DTYPES)] if constructor in _TAKES_DTYPE else "default"
                spelling = IMPORTS[(at // 2) % len(IMPORTS)]
                at += 1
                label = UNCONVERTED if loop == "tensor" and context == "train_step" else LABEL
                body = [f"buf = {_constructor(constructor, write, dtype)}"] \
                    + _label_first_write(_loop_lines(loop, write), label)
                use = "tf.transpose(buf)" if write == "column" else "buf"
                source = _program(context, style, body, use,
                                  helpers=_HELPER_FUNCTION if constructor == "helper_function" else "",
                                  method=_HELPER_METHOD if constructor == "helper_method" else "")
                doc = (f'"""numpy-accumulator bug: {write} writes in a {loop} loop into np.{constructor} '
                       f'({dtype} dtype) in {context} ({style}); the tape stops at the buffer."""\n')
                name = f"bug_{loop}_{write}_{constructor}_{context}_{style}_{dtype}_{spelling}"
                yield Program(name, doc + _spell(source, spelling), False)


def _near_in_context(kind: str, loop: str) -> Tuple[List[str], str]:
    """Body and use of a near-miss written in a gradient context."""
    if kind == "constant_mask":
        writes = {"range": ["for i in range(B):", "    mask[i, 0] = 0.5"],
                  "enumerate": ["for i, scale in enumerate([0.5, 1.0, 0.25]):", "    mask[i, 0] = scale"],
                  "zip": ["for i, scale in zip(range(B), [0.5, 1.0, 0.25]):", "    mask[i, 0] = scale"],
                  "tensor": ["for i in range(B):", "    mask[i] *= 0.5"],
                  "while": ["i = 0", "while i < B:", "    mask[i, -1] = 0.5", "    i += 1"],
                  "nested": ["for i in range(B):", "    for j in range(W):", "        mask[i, j] = 1.0 / (i + j + 1)"],
                  "none": ["mask[0] = 0.5", "mask[-1] = 0.25"]}[loop]
        return ["mask = np.ones((B, W), dtype=np.float32)"] + writes, "h * mask"
    # numpy_weights: weights computed by NumPy from Python numbers
    writes = {"range": ["for j in range(W):", "    weights[j] = 1.0 / (j + 1)"],
              "enumerate": ["for j, value in enumerate(np.linspace(0.5, 1.0, W)):", "    weights[j] = value"],
              "zip": ["for j, value in zip(range(W), np.linspace(0.5, 1.0, W)):", "    weights[j] = value"],
              "tensor": ["for j in range(W):", "    weights[j] += np.sqrt(j + 1.0)"],
              "while": ["j = 0", "while j < W:", "    weights[j] = 2.0 ** -j", "    j += 1"],
              "nested": ["for j in range(W):", "    for k in range(2):", "        weights[j] += 0.25 * k"],
              "none": ["weights[0] = 1.0", "weights[-1] = 0.5"]}[loop]
    return ["weights = np.zeros(W)"] + writes, "h * weights.astype(np.float32)"


_TENSORARRAY_BODY = [
    "mask = np.ones((B, W), dtype=np.float32)",
    "mask[:, 0] = 0.5",
    "rows = tf.TensorArray(tf.float32, size=B)",
    "for i in range(B):",
    "    rows = rows.write(i, h[i] * mask[i])",
    "buf = rows.stack()",
]

# near-misses outside any gradient context: (extra module code, main code)
_SCRIPTS = {
    "numpy_features": ('''

def features(x):
    """Features computed once, as NumPy, before training."""
    feats = np.zeros((len(x), F), dtype=np.float32)
    for i in range(len(x)):
        feats[i] = tf.nn.l2_normalize(x[i]).numpy()
    return feats
''', "features"),
    "preprocessing": ('''

def features(x):
    """Preprocessing outside any gradient context: TensorFlow values stored as NumPy data."""
    feats = np.empty((len(x), F), dtype=np.float32)
    i = 0
    while i < len(x):
        feats[i] = tf.math.l2_normalize(tf.convert_to_tensor(x[i]))
        i += 1
    return feats
''', "features"),
    "after_tape": ('''

def fit_by_hand(model, x, y, steps=3):
    """A hand-written loop: the loss is recorded after the tape closed."""
    optimizer = tf.keras.optimizers.SGD(0.1)
    losses = np.zeros(steps)
    for step in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses[step] = loss
    return losses
''', None),
    "metric_history": ('''

class History(tf.keras.callbacks.Callback):
    """A metric history kept in NumPy by a callback."""

    def on_train_begin(self, logs=None):
        self.losses = np.zeros(10)

    def on_epoch_end(self, epoch, logs=None):
        self.losses[epoch] = logs["loss"]


def record(values):
    history = np.zeros(len(values))
    for k, value in enumerate(values):
        history[k] = tf.reduce_mean(value)
    return history
''', None),
    "integer_ids": ('''

def features(x):
    """Class ids picked in preprocessing: an integer buffer, no gradient wanted."""
    ids = np.zeros(len(x), dtype=np.int64)
    for i in range(len(x)):
        ids[i] = tf.argmax(x[i])
    return x + ids[:, None].astype("float32")
''', "features"),
}


def _near_misses() -> Iterator[Program]:
    at = 0
    for kind in ("constant_mask", "numpy_weights"):
        for loop in LOOPS:
            for context in CONTEXTS:
                body, use = _near_in_context(kind, loop)
                style = _style(context, at)
                spelling = IMPORTS[at % len(IMPORTS)]
                at += 1
                source = _program(context, style, body, use)
                doc = f'"""near-miss: {kind} in {context} ({style}), {loop} loop: NumPy constants, no tensor stored."""\n'
                yield Program(f"near_{kind}_{loop}_{context}_{style}_{spelling}", doc + _spell(source, spelling), True)
    for context in CONTEXTS:
        for spelling in IMPORTS:
            style = _style(context, at)
            at += 1
            source = _program(context, style, _TENSORARRAY_BODY, "buf")
            doc = f'"""near-miss: a correct tf.TensorArray in {context} ({style}) beside a NumPy mask."""\n'
            yield Program(f"near_tensorarray_mask_{context}_{style}_{spelling}", doc + _spell(source, spelling), True)
    for kind, (extra, transform) in _SCRIPTS.items():
        for context in CONTEXTS:
            for spelling in IMPORTS:
                style = _style(context, at)
                at += 1
                body, use = _near_in_context("constant_mask", LOOPS[at % len(LOOPS)])
                main = _script_main(kind, transform)
                source = _program(context, style, body, use, extra=extra, main=main)
                doc = f'"""near-miss: {kind} (outside any gradient context) beside {context} ({style})."""\n'
                yield Program(f"near_{kind}_{context}_{style}_{spelling}", doc + _spell(source, spelling), True)


def _script_main(kind: str, transform: Optional[str]) -> str:
    if transform:
        return f'''

if __name__ == "__main__":
    model, x, y = training_case()[:3]
    print({transform}(x).shape)
'''
    if kind == "after_tape":
        return '''

if __name__ == "__main__":
    model, x, y = training_case()[:3]
    print(fit_by_hand(model, x, y))
'''
    return '''

if __name__ == "__main__":
    print(record([tf.ones(2), tf.zeros(2)]))
'''


# tf.* spellings -> Keras 3's (the programs the keras3 dimension writes use only these)
_KERAS3 = (("import tensorflow as tf", "import keras\nfrom keras import ops"), ("tf.keras.", "keras."),
           ("tf.random.set_seed(0)", "keras.utils.set_random_seed(0)"), ("tf.unstack(", "ops.unstack("),
           ("tf.float32", '"float32"'), ("tf.", "ops."))


def _keras3(source: str) -> str:
    for old, new in _KERAS3:
        source = source.replace(old, new)
    return source


def _keras3_programs() -> Iterator[Program]:
    """Keras 3 code against ``keras.ops``: the fix must stay backend-neutral
    (``keras.ops``, no ``import tensorflow``)."""
    at = 0
    for loop in KERAS3_LOOPS:
        for write in WRITES:
            constructor = KERAS3_CONSTRUCTORS[at % len(KERAS3_CONSTRUCTORS)]
            if write == "mul" and constructor in _ZERO_START or write in ("column", "sub") and constructor in _COPIES:
                constructor = "ones" if write == "mul" else "zeros"
            context = ("model_call", "layer_call", "helper")[at % 3]
            style = _style(context, at // 3)
            at += 1
            body = [f"buf = {_constructor(constructor, write, 'default')}"] + _label_first_write(_loop_lines(loop, write))
            use = "tf.transpose(buf)" if write == "column" else "buf"
            source = _keras3(_program(context, style, body, use,
                                      helpers=_HELPER_FUNCTION if constructor == "helper_function" else ""))
            doc = (f'"""numpy-accumulator bug in Keras 3 code (keras.ops): {write} writes in a {loop} loop '
                   f'into np.{constructor} in {context} ({style})."""\n')
            yield Program(f"bug_keras3_{loop}_{write}_{constructor}_{context}_{style}", doc + source, False)
    for kind in ("constant_mask", "numpy_weights"):
        for loop in KERAS3_LOOPS:
            for context in ("model_call", "layer_call"):
                style = _style(context, at)
                at += 1
                body, use = _near_in_context(kind, loop)
                source = _keras3(_program(context, style, body, use))
                doc = f'"""near-miss in Keras 3 code: {kind} in {context} ({style}), {loop} loop."""\n'
                yield Program(f"near_keras3_{kind}_{loop}_{context}_{style}", doc + source, True)


# (context, style) pairs the rotation of _bugs/_near_misses does not reach: the NumPy buffer
# in a function called from a Layer's `call` of a Sequential, functional or train_step model,
# in a Layer of a train_step model, in a loss compiled on a subclassed model
_STYLED = (("helper", "sequential"), ("helper", "functional"), ("helper", "train_step"),
           ("tf_function", "sequential"), ("tf_function", "functional"), ("tf_function", "train_step"),
           ("layer_call", "train_step"), ("loss", "subclassed"))

_STEPPER = '''

class Stepper(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.pool = Pool()
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.pool(x))

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self(x, training=True)))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
'''


def _styled_program(context: str, style: str, body: List[str], use: str, helpers: str = "") -> str:
    """``_program`` for the pairs of _STYLED: a Pool layer (its ``call``, or
    the function it calls, runs ``body``) in the model ``style`` names, or a
    loss compiled on a subclassed model."""
    if context == "loss":
        source = _program("loss", "sequential", body, use, helpers)
        return source.replace("tf.keras.Sequential([tf.keras.layers.Dense(3, activation=\"tanh\"), "
                              "tf.keras.layers.Dense(1)])", "Net()").replace(
            "\n\ndef functional():", '''

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.enc = tf.keras.layers.Dense(3, activation="tanh")
        self.head = tf.keras.layers.Dense(1)

    def call(self, x):
        return self.head(self.enc(x))


def functional():''', 1)
    source = _program("layer_call", "subclassed" if style == "train_step" else style, body, use, helpers)
    if context != "layer_call":  # the body moves to a module function the layer calls
        call_body = _indent(body, 8) + f"        return tf.cast({use}, tf.float32)\n"
        decorator = "@tf.function\n" if context == "tf_function" else ""
        function = f"\n\n{decorator}def pool(h):\n{_indent(body, 4)}    return tf.cast({use}, tf.float32)\n"
        source = source.replace(call_body, "        return pool(h)\n").replace("\n\nclass Pool(", function + "\n\nclass Pool(", 1)
    if style == "train_step":
        source = source.replace("\n\ndef build():", _STEPPER + "\n\ndef build():").replace(
            "return Wrapper(), None", "return Stepper(), None")
    return source


def _styled_programs() -> Iterator[Program]:
    """Each pair of _STYLED with four bugs (loop, write and constructor
    rotated) and the three in-context near-misses."""
    at = 0
    for context, style in _STYLED:
        for n in range(4):
            loop = LOOPS[at % len(LOOPS)]
            if loop == "tensor" and style == "train_step":
                loop = "range"  # Keras does not autograph train_step: see UNCONVERTED
            write = WRITES[at % len(WRITES)]
            constructor = ("zeros", "ones", "full", "helper_function", "zeros_like", "array")[at % 6]
            if write == "mul" and constructor in _ZERO_START or write == "sub" and constructor in _COPIES:
                constructor = "ones" if write == "mul" else "full"
            spelling = IMPORTS[at % len(IMPORTS)]
            at += 1
            body = [f"buf = {_constructor(constructor, write, 'default')}"] + _label_first_write(_loop_lines(loop, write))
            use = "tf.transpose(buf)" if write == "column" else "buf"
            source = _styled_program(context, style, body, use,
                                     helpers=_HELPER_FUNCTION if constructor == "helper_function" else "")
            doc = (f'"""numpy-accumulator bug: {write} writes in a {loop} loop into np.{constructor} '
                   f'in {context} of a {style} model; the tape stops at the buffer."""\n')
            yield Program(f"bug_styled_{loop}_{write}_{constructor}_{context}_{style}_{spelling}",
                          doc + _spell(source, spelling), False)
        for kind in ("constant_mask", "numpy_weights", "tensorarray_mask"):
            spelling = IMPORTS[at % len(IMPORTS)]
            loop = LOOPS[at % len(LOOPS)]
            at += 1
            body, use = (_TENSORARRAY_BODY, "buf") if kind == "tensorarray_mask" else _near_in_context(kind, loop)
            source = _styled_program(context, style, body, use)
            doc = f'"""near-miss: {kind} in {context} of a {style} model, {loop} loop: no tensor stored in NumPy."""\n'
            yield Program(f"near_styled_{kind}_{loop}_{context}_{style}_{spelling}", doc + _spell(source, spelling), True)


def _cells(source: str) -> List[str]:
    """A program as notebook cells: imports and constants, the model code,
    then ``training_case()`` and what runs it."""
    top = re.search(r"^(class |def |@)", source, re.M).start()
    case = source.index("\n\ndef training_case():")
    return [source[:top], source[top:case], source[case:]]


def _notebooks() -> Iterator[Program]:
    """Every seventh TensorFlow program (so every context, loop and import
    rotation is met) again as a notebook."""
    for at, program in enumerate(list(_bugs()) + list(_near_misses()) + list(_styled_programs())):
        if at % 7 == 0:
            yield Program(program.name + "_notebook", notebook(_cells(program.source)), program.near_miss,
                          suffix=".ipynb")


def generate() -> Iterator[Program]:
    yield from _bugs()
    yield from _near_misses()
    yield from _keras3_programs()
    yield from _styled_programs()
    yield from _notebooks()
