# Snippet of report 9 (r09): a layer's weight added with an integer dtype.
class Counter(keras.layers.Layer):
    def build(self, input_shape):
        self.var = self.add_weight(name="var", shape=(1,), initializer="zeros", dtype=tf.int32)  # expect-cause: integer-source

    def call(self, inputs):
        return inputs * tf.cast(self.var, inputs.dtype)
