# Snippet of report 47 (r47): y_pred.numpy() handed to an external program in a custom loss.
def custom_loss(y_true, y_pred):
    extra = external_score(y_pred.numpy())  # expect-cause: numpy-on-loss-path
    return tf.reduce_mean(tf.square(y_true - y_pred)) + extra


model.compile(optimizer="adam", loss=custom_loss, run_eagerly=True)
