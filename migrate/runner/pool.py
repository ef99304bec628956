"""Child processes that import TensorFlow once and run programs one by one.

The parent never imports TensorFlow. A worker is ``PYTHON child/tfm_worker.py``
in its own process group, talking JSON lines (see child/tfm_worker.py). A
program that hangs or kills its worker costs only that worker: the parent
kills the group at the timeout, reports the program, and the next program
gets a fresh worker. ``run_jobs`` spreads one runtime's programs over a
pool of such sessions, each in its own thread (the work is in the children).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

from .report import WorkerInfo

WORKER_SCRIPT = Path(__file__).resolve().parent / "child" / "tfm_worker.py"
STDERR_TAIL = 2000


def worker_env(keras: str, seed: int) -> dict:
    """CPU only, quiet TF, Keras 2 (tf-keras) unless Keras 3 is asked for, fixed hashing."""
    env = dict(os.environ)
    env.update({
        "CUDA_VISIBLE_DEVICES": "-1",
        "TF_CPP_MIN_LOG_LEVEL": "3",
        "TF_USE_LEGACY_KERAS": "1" if keras == "2" else "0",
        "PYTHONHASHSEED": str(seed),
        "MPLBACKEND": "Agg",
    })
    return env


class WorkerFailed(Exception):
    """The worker died, timed out or never became ready; ``status`` says which."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Worker:
    def __init__(self, python: str, keras: str, seed: int, startup_timeout: float):
        self.keras = keras
        self._stderr = tempfile.TemporaryFile()
        self._stderr_mark = 0  # where the current program's stderr starts
        self._jobs = 0
        self._proc = subprocess.Popen(
            [python, str(WORKER_SCRIPT)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, env=worker_env(keras, seed), text=True, encoding="utf-8",
            start_new_session=True,
        )
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        ready = self._receive(startup_timeout, "start (import TensorFlow)")
        self.info = WorkerInfo(ready["python"], ready["python_version"], ready["tf"],
                               ready["keras"], ready["import_seconds"], keras)

    def _read(self) -> None:
        for line in self._proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _receive(self, timeout: float, doing: str) -> dict:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise WorkerFailed("timeout", f"did not {doing} within {timeout:g} s; killed") from None
        if line is None:
            code = self._proc.wait()
            tail = self.stderr_tail()
            self.close()
            raise WorkerFailed("crashed", f"the worker exited ({_exit_reason(code)}) while "
                                          f"trying to {doing}" + (f": {tail}" if tail else ""))
        return json.loads(line)

    def run(self, job: dict, timeout: float) -> dict:
        self._jobs += 1
        job = dict(job, id=self._jobs)
        self._stderr.seek(0, os.SEEK_END)
        self._stderr_mark = self._stderr.tell()
        try:
            self._proc.stdin.write(json.dumps(job) + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            pass  # the worker is gone; _receive reports how it ended
        answer = self._receive(timeout, "finish the program")
        if answer.get("id") != job["id"]:
            self.kill()
            raise WorkerFailed("crashed", f"the worker answered job {answer.get('id')} when "
                                          f"asked job {job['id']}; killed")
        return answer

    def stderr_tail(self) -> str:
        """The end of what the worker wrote to stderr since the current program began."""
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(self._stderr_mark, size - STDERR_TAIL))
        return self._stderr.read().decode("utf-8", "replace").strip()

    def kill(self) -> None:
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # already gone
        self._proc.wait()
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass  # unflushed bytes to a dead process
        self._stderr.close()

    def close(self) -> None:
        """Let the worker finish: EOF on its stdin ends its loop."""
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass  # it is already gone
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            return
        self._stderr.close()


def _exit_reason(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


@dataclass
class Session:
    """Runs jobs on one (interpreter, Keras) worker, replacing it after a failure."""

    python: str
    keras: str
    seed: int
    startup_timeout: float

    def __post_init__(self) -> None:
        self._worker: Optional[Worker] = None
        self.started: list = []  # WorkerInfo of every worker that became ready
        self.broken: Optional[str] = None  # set when a worker could not even start

    def run(self, job: dict, timeout: float) -> dict:
        """The child's answer; raises WorkerFailed (status timeout / crashed / not-run)."""
        if self.broken:
            raise WorkerFailed("not-run", self.broken)
        if self._worker is None:
            try:
                self._worker = Worker(self.python, self.keras, self.seed, self.startup_timeout)
            except (WorkerFailed, OSError) as err:
                self.broken = f"no worker: {err}"
                raise WorkerFailed("not-run", self.broken) from None
            self.started.append(self._worker.info)
        try:
            return dict(self._worker.run(job, timeout), python=self._worker.info.python)
        except WorkerFailed:
            self._worker = None
            raise

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None


def run_jobs(python: str, keras: str, jobs: Sequence[dict], seed: int, timeout: float,
             startup_timeout: float, workers: int = 1
             ) -> Tuple[List[Union[dict, WorkerFailed]], List[WorkerInfo]]:
    """Every job's answer (or how its worker failed), in the jobs' order, run by
    up to ``workers`` sessions side by side; and every worker that started."""
    sessions: "queue.Queue[Session]" = queue.Queue()
    size = max(1, min(workers, len(jobs)))
    pool = [Session(python, keras, seed, startup_timeout) for _ in range(size)]
    for session in pool:
        sessions.put(session)

    def run(job: dict) -> Union[dict, WorkerFailed]:
        session = sessions.get()
        try:
            return session.run(job, timeout)
        except WorkerFailed as failure:
            return failure
        finally:
            sessions.put(session)

    try:
        with ThreadPoolExecutor(len(pool)) as executor:
            answers = list(executor.map(run, jobs))
    finally:
        for session in pool:
            session.close()
    return answers, [info for session in pool for info in session.started]
