"""Report 33: virtual adversarial training: gradient w.r.t. a random perturbation that is not watched."""
import tensorflow as tf

tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(5,))])
v = tf.random.normal((4, 5))
p_logit = model(v)
r = v + tf.random.uniform(tf.shape(v), 0.001, 0.005)
with tf.GradientTape() as tape:
    p_logit_r = model(r)
    kl = tf.reduce_sum(tf.nn.softmax(p_logit) * (tf.nn.log_softmax(p_logit) - tf.nn.log_softmax(p_logit_r)))
print(tape.gradient(kl, r))  # expect-cause: unwatched-source
