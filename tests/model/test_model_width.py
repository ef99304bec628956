"""Output width of models and layers built in the same module."""

import pytest

from recipes._model import Kind

HEADER = """
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras import layers
"""


@pytest.mark.parametrize("code, width", [
    ("model = keras.Sequential([layers.Dense(16, activation='relu'), layers.Dense(1)])", 1),
    ("model = tf.keras.Sequential([layers.Dense(16), layers.Dense(1), layers.Activation('sigmoid')])", 1),
    ("model = tf.keras.models.Sequential([layers.Dense(16), layers.Dense(10)])", 10),
    ("model = keras.Sequential([layers.Dense(units=1)])", 1),
    ("N = 1\nmodel = keras.Sequential([layers.Dense(N)])", 1),
    ("model = keras.Sequential([layers.Dense(4), layers.Flatten()])", None),
    ("model = keras.models.load_model('m.h5')", None),
    ("""def build_model(n_out=1):
    net = keras.Sequential([layers.Dense(8), layers.Dense(1, activation='sigmoid')])
    net.compile(optimizer='adam', loss='binary_crossentropy')
    return net
model = build_model()""", 1),
    ("model = keras.Sequential()\nmodel.add(layers.Dense(8))\nmodel.add(layers.Dense(1))", 1),
    ("""inputs = keras.Input(shape=(4,))
h = layers.Dense(8, activation='relu')(inputs)
outputs = layers.Dense(1, activation='sigmoid')(h)
model = keras.Model(inputs, outputs)""", 1),
    ("""inputs = keras.Input(shape=(4,))
h = layers.Dense(8)(inputs)
model = keras.Model(inputs=inputs, outputs=layers.Dense(3)(h))""", 3),
    ("""class Regressor(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(32)
        self.head = layers.Dense(1)
    def call(self, x):
        return self.head(self.hidden(x))
model = Regressor()""", 1),
])
def test_width_of_a_model_built_here(snippet, code, width):
    s = snippet(HEADER, code + "\nprediction = model(x)\n")
    model = s.kind("model", -1)
    assert model.kind == Kind.MODEL
    assert model.width == width
    prediction = s.kind("model(x)")
    assert prediction.kind == Kind.TENSOR and prediction.width == width


def test_subclass_of_a_module_base_class_is_a_model(snippet):
    s = snippet(HEADER, """
        class Base(tf.keras.Model):
            pass
        class Head(Base):
            def __init__(self):
                super().__init__()
                self.out = layers.Dense(1)
            def call(self, x):
                return self.out(x)
        m = Head()
    """)
    assert s.kind("m", -1).kind == Kind.MODEL and s.kind("m", -1).width == 1


def test_a_class_that_is_not_keras_is_not_a_model(snippet):
    s = snippet(HEADER, """
        class Thing:
            def call(self, x):
                return layers.Dense(1)(x)
        t = Thing()
    """)
    assert s.kind("t", -1).kind == Kind.OTHER
