"""Code that runs inside the TensorFlow worker processes. The worker starts it
by path (``python child/tfm_worker.py``), so its modules import each other as
top-level modules; the parent never imports them. This file only makes the
directory part of the installed package."""
