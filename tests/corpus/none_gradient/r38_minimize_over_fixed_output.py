"""Report 38: the loss function reads an output computed once, outside."""
import tensorflow as tf


class Dense(tf.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = tf.Variable(tf.random.normal([n_in, n_out]), name="w")
        self.b = tf.Variable(tf.zeros([n_out]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


layer = Dense(2, 4)
output = layer([[7.0, 3.0]])  # expect-cause: outside-tape


def loss_fn():
    return tf.reduce_mean(tf.square(tf.ones([1, 4]) - output))


tf.keras.optimizers.Adam(0.4).minimize(loss_fn, var_list=layer.trainable_variables)
