# Snippet of report 4 (r04): a gradient with respect to a constant that was never watched.
ones = tf.ones((1, 3))
with tf.GradientTape() as tape:
    class_channel = tf.reduce_sum(ones * 2.0)
grads = tape.gradient(class_channel, ones)  # expect-cause: unwatched-source
