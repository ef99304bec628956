# Snippet of report 21 (r21): a model's call reassigns its weight from the input.
class M(tf.keras.Model):
    def call(self, x):
        self.w.assign(x)  # expect-cause: assign-in-forward
        return tf.reduce_sum(self.w * 2.0)
