# Snippet of report 12 (r12): an optimizer over a variable made from a Python int.
w = tf.Variable(5)  # expect-cause: integer-source
loss = lambda: (w - 3) ** 2
opt.minimize(loss, var_list=[w])
