# Snippet of report 26 (r26): minimize() given a lambda over a cost computed before it.
cost = -tf.reduce_mean(tf.reduce_sum(tf.math.log(y_n), axis=0))
loss = lambda: cost  # expect-cause: outside-tape
opt.minimize(loss, var_list=[y_n])
