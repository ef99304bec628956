# Snippet of report 22 (r22): an inner update with assign_add inside the tape.
with tf.GradientTape() as t:
    t.watch(x)
    v.assign_add(x)  # expect-cause: assign-in-forward
    loss = v * v
print(t.gradient(loss, x))
