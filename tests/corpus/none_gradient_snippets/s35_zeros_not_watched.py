# Snippet of report 35 (r35): the gradient w.r.t. tf.zeros without a watch.
x = tf.zeros(())
with tf.GradientTape() as tape:
    y = 2 * x + 3
grad_of_y_wrt_x = tape.gradient(y, x)  # expect-cause: unwatched-source
