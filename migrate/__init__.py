"""tf-migrate: codemods for TensorFlow 2.x gradient bugs."""
__version__ = "0.1.0"
