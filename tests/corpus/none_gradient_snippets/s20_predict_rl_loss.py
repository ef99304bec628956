# Snippet of report 20 (r20): a policy-gradient loss from model.predict, in a helper.
def train_step(states, actions, returns):
    with tf.GradientTape() as tape:
        probs = policy.predict(states)  # expect-cause: predict-in-tape
        picked = tf.reduce_sum(probs * tf.one_hot(actions, 2), axis=1)
        loss = -tf.reduce_mean(tf.math.log(picked) * returns)
    grads = tape.gradient(loss, policy.trainable_variables)
    optimizer.apply_gradients(zip(grads, policy.trainable_variables))
