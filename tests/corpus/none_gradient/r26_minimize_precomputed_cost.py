"""Report 26: minimize() given a lambda over a cost computed before it."""
import tensorflow as tf

y_n = tf.Variable([1.0, 2.0, 3.0], name="dd")
cost = -tf.reduce_mean(tf.reduce_sum(tf.math.log(y_n), axis=0))
loss = lambda: cost  # expect-cause: outside-tape
tf.keras.optimizers.Adam(0.5).minimize(loss, var_list=[y_n])
