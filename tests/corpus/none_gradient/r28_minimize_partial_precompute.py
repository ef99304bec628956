"""Report 28: the cost lambda reads a unitary computed from the variable before minimize."""
import tensorflow as tf

h0 = tf.Variable(tf.random.normal([4, 4]))
m = tf.linalg.diag(tf.constant([1.0, 0.0, 0.0, 0.0]))
ih = h0 - tf.transpose(h0)  # expect-cause: outside-tape
u = tf.linalg.expm(ih)
cost = lambda: tf.linalg.trace(tf.matmul(tf.matmul(u, m), u, transpose_b=True))
tf.keras.optimizers.SGD(0.001).minimize(cost, var_list=[h0])
