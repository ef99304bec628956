"""The cached Python environment of the real TF 2.3, built on first use.

TF 2.3 wheels exist for Python 3.5-3.8 only, so the environment is made from a
Python 3.8 (or 3.7): ``--python``, else ``python3.8`` / ``python3.7`` on PATH,
else pyenv's (``$PYENV_ROOT`` or ``pyenv root``, ``versions/3.8.*``). It lives
under the tool's cache folder (``<cache>/envs/tf2.3-py3.8``) and is reused
while its ``ready.json`` marker names the same packages; the marker is
written only after pip succeeded, so an install that was killed is rebuilt,
never reused. A lock file keeps two concurrent runs from building it twice.

A build takes minutes (the TF 2.3 wheel alone is over 100 MB): it says, on stderr
and as plain lines that a CI log keeps, how long it has been running and what
pip is doing (collecting, downloading, installing), and keeps saying so while
pip is quiet.
"""

from __future__ import annotations

import fcntl
import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Set, Tuple

from rich.console import Console

MARKER = "ready.json"
LOG = "install.log"


class Unavailable(Exception):
    """A runtime cannot be had; the message is one line naming what to install."""


@dataclass(frozen=True)
class EnvironmentSpec:
    name: str  # folder name prefix under <cache>/envs
    packages: Tuple[str, ...]
    pythons: Tuple[Tuple[int, int], ...]  # usable base interpreters, preferred first


# protobuf<3.21: TF 2.3's generated protos do not load with newer protobuf;
# pandas<1.2: the last pandas built against NumPy 1.18, for programs using pandas
TF23 = EnvironmentSpec("tf2.3", ("tensorflow-cpu==2.3.0", "protobuf<3.21", "pandas<1.2"),
                       ((3, 8), (3, 7)))
_VERSION = "import sys; print('%d.%d' % sys.version_info[:2])"


@dataclass(frozen=True)
class Interpreter:
    path: str
    version: Tuple[int, int]

    def __str__(self) -> str:
        return self.path


def find_base_python(explicit: Optional[str], spec: EnvironmentSpec = TF23) -> Interpreter:
    """The interpreter to build ``spec``'s environment from; Unavailable when none fits."""
    wanted = " or ".join(f"{major}.{minor}" for major, minor in spec.pythons)
    if explicit:
        version = _version_of(explicit)
        if version in spec.pythons:
            return Interpreter(explicit, version)
        shown = "not runnable" if version is None else "Python %d.%d" % version
        raise Unavailable(f"--python {explicit} is {shown}; {spec.name} needs Python {wanted} "
                          f"(e.g. `pyenv install 3.8`) or an interpreter that has it installed")
    for candidate in _candidates(spec):
        version = _version_of(candidate)
        if version in spec.pythons:
            return Interpreter(candidate, version)
    first = "%d.%d" % spec.pythons[0]
    raise Unavailable(f"no Python {wanted} found (python{first} on PATH, pyenv versions) for "
                      f"{spec.name}: install one (e.g. `pyenv install {first}`) or pass --python")


def _candidates(spec: EnvironmentSpec) -> Iterator[str]:
    for major, minor in spec.pythons:
        found = shutil.which(f"python{major}.{minor}")
        if found:
            yield found
    root = _pyenv_root()
    if root is None:
        return
    for major, minor in spec.pythons:
        versions = sorted((root / "versions").glob(f"{major}.{minor}.*"), key=_numeric, reverse=True)
        for version in versions:
            if (version / "bin" / "python").exists():
                yield str(version / "bin" / "python")


def _pyenv_root() -> Optional[Path]:
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    if shutil.which("pyenv"):
        done = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip())
    return None


def _numeric(path: Path) -> Tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.name))


def _version_of(python: str) -> Optional[Tuple[int, int]]:
    """(major, minor) of an interpreter, None when it does not run (a pyenv
    shim for a version that is not selected fails here)."""
    try:
        done = subprocess.run([python, "-c", _VERSION], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.fullmatch(r"(\d+)\.(\d+)", done.stdout.strip())
    return (int(match.group(1)), int(match.group(2))) if done.returncode == 0 and match else None


def location(base: Interpreter, cache_dir: Path, spec: EnvironmentSpec = TF23) -> Path:
    major, minor = base.version
    return Path(cache_dir) / "envs" / f"{spec.name}-py{major}.{minor}"


def _env_python(directory: Path) -> Path:
    return directory / "bin" / "python"


def ready(base: Interpreter, cache_dir: Path, spec: EnvironmentSpec = TF23) -> Optional[Path]:
    """The environment's interpreter when a complete build for ``spec`` is cached."""
    directory = location(base, cache_dir, spec)
    try:
        marker = json.loads((directory / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if marker.get("packages") != list(spec.packages) or not _env_python(directory).exists():
        return None
    return _env_python(directory)


def ensure(base: Interpreter, cache_dir: Path, refresh: bool, console: Console,
           spec: EnvironmentSpec = TF23) -> Path:
    """The environment's interpreter: the cached one, or a new build (``refresh``:
    always a new build). Unavailable when venv or pip fails."""
    directory = location(base, cache_dir, spec)
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise Unavailable(f"cannot create {directory.parent}: {err.strerror or err}") from None
    with _locked(directory.parent / f"{directory.name}.lock"):
        if not refresh and ready(base, cache_dir, spec):
            return _env_python(directory)
        _build(base, directory, spec, console)
    return _env_python(directory)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(base: Interpreter, directory: Path, spec: EnvironmentSpec, console: Console) -> None:
    started = time.perf_counter()
    shutil.rmtree(directory, ignore_errors=True)
    what = " ".join(spec.packages)
    console.print(f"tf-migrate: creating the {spec.name} environment in {directory} "
                  f"({base}, {what}); it is reused afterwards", markup=False, highlight=False)
    pip = [] if spec.packages else ["--without-pip"]  # nothing to install: no pip needed
    steps = [("create the environment", [base.path, "-m", "venv", *pip, str(directory)])]
    if spec.packages:
        steps.append(("install " + what, [str(_env_python(directory)), "-m", "pip", "install",
                                          "--disable-pip-version-check", "--progress-bar", "off",
                                          *spec.packages]))
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / LOG
    progress = Progress(console, spec.name)
    with log.open("w", encoding="utf-8") as handle, console.status("") as status:
        for doing, command in steps:
            progress.step(doing)
            code, last = _run_logged(command, handle, progress, status.update)
            if code != 0:
                raise Unavailable(f"could not {doing} for {spec.name} with {base} "
                                  f"(exit {code}: {last}); log: {log}")
    marker = {"packages": list(spec.packages), "base": base.path,
              "seconds": round(time.perf_counter() - started, 1)}
    tmp = directory / (MARKER + ".tmp")
    tmp.write_text(json.dumps(marker), encoding="utf-8")
    os.replace(tmp, directory / MARKER)
    console.print(f"tf-migrate: {spec.name} environment ready in {marker['seconds']:.0f} s",
                  markup=False, highlight=False)


# pip's output lines that start a phase
PHASES = (("collecting", re.compile(r"(Collecting|Processing|Obtaining|Looking in) ")),
          ("downloading", re.compile(r"(Downloading|Using cached) ")),
          ("installing", re.compile(r"(Installing collected packages|Building wheels?|"
                                    r"Successfully installed)\b")))


class Progress:
    """The build's progress as lines: one when pip enters a phase for the
    first time, one when it changes phase again if ``EVERY`` seconds passed
    (it alternates between collecting and downloading package after package),
    and one every ``QUIET`` seconds when nothing was said (installing TF prints
    nothing for minutes). Each names the seconds since the build started."""

    EVERY, QUIET = 5.0, 30.0

    def __init__(self, console: Console, name: str, clock: Callable[[], float] = time.monotonic):
        self.console, self.name, self.clock = console, name, clock
        self.started = self.said_at = clock()
        self.phase, self.said_phase, self.latest = "", "", ""
        self.shown: Set[str] = set()

    def step(self, doing: str) -> None:
        self.phase = doing
        self._say(doing)

    def line(self, text: str) -> None:
        """One line of pip's output."""
        self.latest = text
        self.phase = next((name for name, start in PHASES if start.match(text)), self.phase)
        changed = self.phase != self.said_phase and self.clock() - self.said_at >= self.EVERY
        if self.phase not in self.shown or changed:
            self._say(f"{self.phase}: {text}")

    def quiet(self) -> None:
        """No output for a while."""
        if self.clock() - self.said_at >= self.QUIET:
            self._say(f"still {self.phase}" + (f" (pip's last line: {self.latest})" if self.latest else ""))

    def elapsed(self) -> str:
        return f"{self.clock() - self.started:4.0f} s"

    def _say(self, what: str) -> None:
        self.shown.add(self.phase)
        self.said_at, self.said_phase = self.clock(), self.phase
        self.console.print(f"tf-migrate: {self.name} [{self.elapsed()}] {what[:160]}",
                           markup=False, highlight=False, soft_wrap=True)


def _run_logged(command: Sequence[str], log, progress: Progress,
                status: Callable[[str], None]) -> Tuple[int, str]:
    """Run ``command``, every output line to ``log`` and to ``progress`` (and
    the latest to ``status``, a terminal's spinner); (exit code, the last line
    that says what went wrong, else the last line)."""
    lines: List[str] = []
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, encoding="utf-8", errors="replace")
    except OSError as err:
        return 127, str(err.strerror or err)
    with proc:
        for line in _lines(proc.stdout, progress.quiet):
            log.write(line)
            line = line.strip()
            if line:
                lines.append(line)
                progress.line(line)
                status(f"{progress.name} [{progress.elapsed()}] {progress.phase}: {line[:100]}")
    code = proc.returncode
    errors = [line for line in lines if line.startswith("ERROR")]
    return code, (errors or lines or ["no output"])[-1]


def _lines(stream, quiet: Callable[[], None], wait: float = 1.0) -> Iterator[str]:
    """The lines of ``stream``; ``quiet`` is called every ``wait`` seconds
    that none comes (a thread reads, so that silence can be noticed)."""
    arrived: "queue.Queue[Optional[str]]" = queue.Queue()

    def read() -> None:
        for line in stream:
            arrived.put(line)
        arrived.put(None)

    threading.Thread(target=read, daemon=True).start()
    while True:
        try:
            line = arrived.get(timeout=wait)
        except queue.Empty:
            quiet()
            continue
        if line is None:
            return
        yield line
