# Snippet of report 33 (r33): the gradient w.r.t. a random perturbation that is not watched.
r = v + tf.random.uniform(tf.shape(v), 0.001, 0.005)
with tf.GradientTape() as tape:
    p_logit_r = model(r)
    kl = tf.reduce_sum(tf.nn.softmax(p_logit) * (tf.nn.log_softmax(p_logit) - tf.nn.log_softmax(p_logit_r)))
grad = tape.gradient(kl, r)  # expect-cause: unwatched-source
