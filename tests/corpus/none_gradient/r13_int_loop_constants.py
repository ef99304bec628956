"""Report 13: a while_loop over integer constants: no gradient flows through ints."""
import tensorflow as tf

i = tf.constant(1)
inc = tf.constant(1)
with tf.GradientTape() as tape:
    tape.watch(i)  # expect-cause: integer-source
    out = tf.while_loop(lambda i, inc: i <= 5, lambda i, inc: [i + inc, inc], [i, inc])
print(tape.gradient(out[0], i))
