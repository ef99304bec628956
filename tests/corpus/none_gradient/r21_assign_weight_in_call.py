"""Report 21: a model's call reassigns its weight from the input; the gradient w.r.t. the input is None."""
import tensorflow as tf


class LogPosterior(tf.keras.Model):
    def build(self, input_shape):
        self.w = self.add_weight(name="w", shape=(), dtype=tf.float64, initializer="ones")

    def call(self, x):
        self.w.assign(x)  # expect-cause: assign-in-forward
        return -0.5 * self.w ** 2


model = LogPosterior(dtype="float64")
x = tf.constant(2.0, dtype=tf.float64)
model(x)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = model(x)
print(tape.gradient(y, x))
