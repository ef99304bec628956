"""Report 27: an autoencoder's train method hands minimize a lambda over a loss tensor it computed."""
import tensorflow as tf


class ContrastiveAE:
    def __init__(self):
        self.encoder = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(6,))])
        self.decoder = tf.keras.Sequential([tf.keras.layers.Dense(6, input_shape=(2,))])
        self.optimizer = tf.keras.optimizers.Adam(0.01)

    def train(self, x):
        recon = self.decoder(self.encoder(x))
        loss = tf.reduce_mean(tf.square(recon - x))
        variables = self.encoder.trainable_variables + self.decoder.trainable_variables
        self.optimizer.minimize(loss=lambda: loss, var_list=variables)  # expect-cause: outside-tape


ContrastiveAE().train(tf.random.normal((8, 6)))
