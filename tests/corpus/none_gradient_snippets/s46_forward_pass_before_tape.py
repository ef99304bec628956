# Snippet of report 46 (r46): actor-critic, the forward pass moved above the tape.
action_probs, critic_value = model(state)  # expect-cause: outside-tape
with tf.GradientTape() as tape:
    actor_loss = -tf.math.log(action_probs[0, action]) * advantage
    critic_loss = huber_loss(critic_value, ret)
    loss_value = actor_loss + critic_loss
grads = tape.gradient(loss_value, model.trainable_variables)
optimizer.apply_gradients(zip(grads, model.trainable_variables))
