# Snippet of report 3 (r03): the function is called in the gradient call, after the with block.
def grad(x):
    with tf.GradientTape() as t:
        t.watch(x)
    return t.gradient(f(x), x)  # expect-cause: outside-tape
