"""The dynamic check: which `tape.gradient` calls of the user's code returned
None, entirely or for some sources, and where.

It wraps ``GradientTape.gradient`` on the class (so every alias sees it) and,
for a result containing None, walks the stack out to the first frame of the
user's code: library frames (TensorFlow, Keras, site-packages, the standard
library) are skipped; a frame of the runner's own checks means the call is
the runner's and is not recorded. Code that autograph converted for
``tf.function`` runs from a generated file; its ``ag_source_map`` leads back
to the user's file and line. The script itself is never modified.

Runs in the child: Python 3.8 and TF 2.3 compatible.
"""

from __future__ import annotations

import gc
import os
import sys
import sysconfig
import tempfile

_TEMP = tempfile.gettempdir()


def _library_dirs():
    dirs = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.realpath(path))
    for name in ("tensorflow", "tf_keras", "keras", "numpy"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.add(os.path.realpath(os.path.dirname(module.__file__)))
    return tuple(sorted(dirs))


def _source_name(source, index):
    try:
        name = source.name
    except (AttributeError, ValueError):  # eager tensors have no name
        name = None
    return name or "source[%d]" % index


class TapeProbe(object):
    """Install once per worker; ``begin()`` before each program, ``records()`` after."""

    def __init__(self, tf, runner_dir):
        self._tf = tf
        self._runner_dir = os.path.realpath(runner_dir)
        self._libraries = _library_dirs()
        self._calls = 0
        self._found = {}
        self._origins = {}

    def install(self):
        tape_class = type(self._tf.GradientTape())
        original = tape_class.gradient
        probe = self

        def gradient(tape, target, sources, *args, **kwargs):
            try:
                result = original(tape, target, sources, *args, **kwargs)
            except Exception:
                # TF 2.3 returns None for a symbolic Keras tensor (model.inputs); current Keras raises
                flat = probe._tf.nest.flatten(sources)
                if any(type(source).__name__ == "KerasTensor" for source in flat):
                    probe._observe(sources, [None] * len(flat), sys._getframe(1))
                raise
            probe._observe(sources, result, sys._getframe(1))
            return result

        gradient.__wrapped__ = original
        gradient.__doc__ = original.__doc__
        tape_class.gradient = gradient
        return self

    def begin(self):
        self._calls = 0
        self._found = {}

    def records(self):
        return {"calls": self._calls, "none": sorted(self._found.values(), key=_order)}

    def _observe(self, sources, result, frame):
        flat_sources = self._tf.nest.flatten(sources)
        flat_result = self._tf.nest.flatten(result)  # None is a leaf: [None]
        missing = [i for i, grad in enumerate(flat_result) if grad is None]
        location = self._user_location(frame)
        if location is None:
            return  # the runner's own gradient step, reported by its own check
        self._calls += 1
        if not missing:
            return
        entry = self._found.get(location)
        if entry is None:
            entry = {"file": location[0], "line": location[1], "function": location[2],
                     "calls": 0, "sources": len(flat_sources), "none_sources": [],
                     "entirely": True}
            self._found[location] = entry
        entry["calls"] += 1
        entry["entirely"] = entry["entirely"] and len(missing) == len(flat_sources)
        for i in missing:
            name = _source_name(flat_sources[i], i)
            if name not in entry["none_sources"] and len(entry["none_sources"]) < 20:
                entry["none_sources"].append(name)

    def _user_location(self, frame):
        while frame is not None:
            filename = os.path.realpath(frame.f_code.co_filename)
            if filename.startswith(self._runner_dir):
                return None
            line, function = frame.f_lineno, frame.f_code.co_name
            if _is_generated(frame.f_code.co_filename):
                origin = self._origin(frame)
                if origin is None:
                    frame = frame.f_back
                    continue
                filename, line, function = origin
                if filename.startswith(self._runner_dir):
                    return None
            if not self._is_library(filename) and not filename.startswith("<"):
                return (filename, line, function)
            frame = frame.f_back
        return None

    def _origin(self, frame):
        key = (frame.f_code, frame.f_lineno)
        if key not in self._origins:
            self._origins[key] = _autograph_origin(frame)
        return self._origins[key]

    def _is_library(self, filename):
        return any(filename.startswith(d + os.sep) for d in self._libraries)


def _autograph_origin(frame):
    """(file, line, function) of the user code that autograph converted into
    the code running in ``frame``, or None when the frame is not converted."""
    for referrer in gc.get_referrers(frame.f_code):
        source_map = getattr(referrer, "ag_source_map", None)
        if not source_map:
            continue
        for location, origin in source_map.items():
            if location.filename == frame.f_code.co_filename and location.lineno == frame.f_lineno:
                return (os.path.realpath(origin.loc.filename), origin.loc.lineno,
                        origin.function_name)
    return None


def _is_generated(filename):
    """Autograph's output: __autograph_generated_file*.py; TF 2.3: tmpXXXX.py
    right in the temp dir."""
    if "__autograph_generated" in filename:
        return True
    directory, name = os.path.split(filename)
    return directory == _TEMP and name.startswith("tmp") and name.endswith(".py")


def _order(entry):
    return (entry["file"], entry["line"])
