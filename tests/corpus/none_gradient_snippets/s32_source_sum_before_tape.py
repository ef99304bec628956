# Snippet of report 32 (r32): the source is a sum computed before the tape, never watched.
x = x0 + x1
with tf.GradientTape() as tape:
    z = tf.reduce_sum(x * x)
print(tape.gradient(z, x))  # expect-cause: unwatched-source
