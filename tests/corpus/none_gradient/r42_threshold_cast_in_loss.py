"""Report 42: a threshold made with a cast to int and back, on the loss path."""
import tensorflow as tf

weights = tf.Variable([9.0, 8.0, 3.0, 2.0])
threshold = tf.Variable(10.0)
features = tf.constant([[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
target = tf.constant([1.0, 0.0])
with tf.GradientTape() as tape:
    score = tf.reduce_sum(features * weights, axis=1) / threshold
    decision = tf.cast(tf.cast(score, tf.int32) > 0, tf.float32)  # expect-cause: nondifferentiable-op
    loss = tf.reduce_mean(tf.square(decision - target))
print(tape.gradient(loss, [weights, threshold]))
