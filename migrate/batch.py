"""Many files through the engine: read, transform, optionally write, and
summarise. One file's failure is a value in its Outcome; the batch goes on.

With ``jobs > 1`` the files go to a pool of forked worker processes, a few
at a time (one round trip between the processes per task, not per file): a
worker receives paths and returns picklable Outcomes (each worker compiles
the recipes' Bowler tools once, on first use); every write happens in this
process, in input order. Ctrl-C terminates the workers and propagates as
KeyboardInterrupt (Typer turns it into exit code 130); since writes are
atomic renames done here, no file is ever half written.
"""

from __future__ import annotations

import os
import signal
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Deque, Dict, Iterable, Iterator, List, Optional

from . import files
from .cache import Cache
from .options import Options
from .result import Diagnostic, SourceResult, Status, cell_label
from .textdiff import line_map
from .shard import Shard

if TYPE_CHECKING:  # the pool's modules load when it starts: a warm run never needs them
    import multiprocessing.queues
    from concurrent.futures import Future, ProcessPoolExecutor

WINDOW_PER_JOB = 64  # files in flight per worker: workers stay busy, memory stays bounded
TASK_FILES = 8  # files per task at most (fewer when there are few files to share out)


@dataclass(eq=False, repr=False)
class Outcome:
    """One file's fate: its engine result, or why it could not be read/written."""

    path: Path
    result: Optional[SourceResult] = None
    source: Optional[files.SourceFile] = None
    problem: Optional[str] = None  # unreadable, unparsable, crashed, write refused
    written: bool = False

    @property
    def status(self) -> Status:
        if self.result is None:
            return Status.SKIPPED
        return self.result.status

    @property
    def failed(self) -> bool:
        """Could not be processed completely: exit code 2 territory."""
        return self.problem is not None or self.status in (Status.SKIPPED, Status.FAILED)


def process(path: Path, options: Options) -> Outcome:
    """Read and transform one file; never raises."""
    try:
        source = files.read(path)
    except files.Unreadable as err:
        return Outcome(path, problem=str(err))
    result = engine_for(path)(source.text, str(path), options)
    return _checked(Outcome(path, result, source))


def engine_for(path: Path) -> Callable[[str, str, Options], SourceResult]:
    """The engine's ``transform`` (or the notebook one), imported on first
    use: a run served from the cache never loads the parser."""
    if path.suffix == ".ipynb":
        from .notebook import transform_notebook

        return transform_notebook
    from .engine import transform

    return transform


def write(outcome: Outcome) -> None:
    """Write a changed file atomically; a refusal becomes the outcome's problem."""
    result, source = outcome.result, outcome.source
    if result is None or source is None or not result.changed:
        return
    try:
        files.write(source, result.output)
        outcome.written = True
    except files.WriteRefused as err:
        outcome.problem = str(err)


@dataclass(eq=False, repr=False)
class Left:
    """A finding a file still has after `fix`: at its line in the file as it
    is on disk, and at its line in the original (None: a line the fix wrote)."""

    diagnostic: Diagnostic
    original_line: Optional[int]


def left_after_fix(outcome: Outcome, options: Options, with_fixes: bool = False) -> List[Left]:
    """The findings left in ``outcome``'s file as `fix` left it on disk
    (written, or the original when the write was refused): a rewritten file
    is checked again, so every line is a line of the file as written; with
    the edits of each one's fix when ``with_fixes`` (slower)."""
    result = outcome.result
    if result is None:
        return []
    if not result.changed:
        return [Left(d, d.line) for d in result.pending]
    if outcome.written and not result.pending:
        return []  # the fixpoint left nothing
    text = result.output if outcome.written else result.source
    checked = replace(options, apply=with_fixes, isolated=True, unsafe_fixes=True)  # as `check` sees it
    found = engine_for(outcome.path)(text, str(outcome.path), checked).diagnostics
    if not outcome.written:
        return [Left(d, d.line) for d in found]
    before, after = units_of(outcome.path, result.source), units_of(outcome.path, text)
    back = {label: line_map(after[label], before.get(label, ""), nearest=False) for label in after}
    return [Left(d, back[d.path](d.line) if d.path in back else None) for d in found]


def units_of(path: Path, text: str) -> Dict[str, str]:
    """What a finding's line counts in, by the path it carries: the file, or
    each cell of a notebook (``nb.ipynb:cell N``)."""
    if path.suffix != ".ipynb":
        return {str(path): text}
    import nbformat

    cells = nbformat.reads(text, as_version=nbformat.NO_CONVERT).cells
    return {cell_label(str(path), i + 1): cell.source for i, cell in enumerate(cells)}


def default_jobs() -> int:
    return os.cpu_count() or 1


@dataclass(eq=False, repr=False)
class Scaling:
    """How a batch is spread and what it may skip: --jobs, --shard,
    --files-from, and the cache directory (None: --no-cache). Hashable by
    identity (``eq=False``), as ``Run``'s shared default needs."""

    jobs: int = 1
    shard: Optional[Shard] = None
    files_from: Optional[str] = None
    cache_dir: Optional[Path] = None

    def cache(self, options: Options) -> Optional[Cache]:
        return Cache(self.cache_dir, options) if self.cache_dir is not None else None


def run(paths: Iterable[Path], options: Options,
        on_done: Optional[Callable[[Outcome], None]] = None, *,
        jobs: int = 1, cache: Optional[Cache] = None) -> Iterator[Outcome]:
    """Outcomes in the order of ``paths``, computed by up to ``jobs`` worker
    processes; results found in ``cache`` skip the engine (never the write)."""
    paths = list(paths)
    workers = _Workers(options, min(jobs, len(paths)))
    queue: Deque[_Pending] = deque()
    window = max(jobs, 1) * WINDOW_PER_JOB
    size = max(1, min(TASK_FILES, len(paths) // (max(jobs, 1) * 4)))
    task = _Task()
    try:
        for path in paths:
            pending = _start(path, cache, task if workers.parallel else None)
            queue.append(pending)
            if len(task.paths) >= size:
                task = workers.send(task)
            while queue and (len(queue) > window or queue[0].ready()):
                if queue[0].task is task:  # its results are waited for: the task goes now
                    task = workers.send(task)
                yield _finish(queue.popleft(), options, cache, workers, on_done)
        workers.send(task)
        while queue:
            yield _finish(queue.popleft(), options, cache, workers, on_done)
    except BaseException:
        workers.terminate()
        raise
    workers.close()


class _Task:
    """Files a worker computes together; ``future`` is set once sent (None
    after that: the pool could not take it, the files run in this process)."""

    def __init__(self) -> None:
        self.paths: List[Path] = []
        self.sent = False
        self.future: Optional[Future] = None

    def ready(self) -> bool:
        return self.sent and (self.future is None or self.future.done())


@dataclass(eq=False, repr=False)
class _Pending:
    path: Path
    outcome: Optional[Outcome] = None  # known already (cache hit)
    task: Optional[_Task] = None  # computing in a worker; neither: run in this process
    index: int = 0  # its place in the task

    def ready(self) -> bool:
        return self.task is None or self.task.ready()


class _Workers:
    """A forked process pool, started only when it pays (more than one job
    and one file). Fork, because recipes hold lambdas (not picklable) and the
    workers inherit them, compiled tools included; where fork does not exist
    the batch runs in-process. A pool broken by a dying worker is replaced."""

    def __init__(self, options: Options, jobs: int) -> None:
        self.options = options
        self.jobs = jobs if hasattr(os, "fork") else 1
        self.pool: Optional[ProcessPoolExecutor] = None
        self.pids: Optional[multiprocessing.queues.SimpleQueue] = None  # each worker says its pid

    @property
    def parallel(self) -> bool:
        return self.jobs > 1

    def send(self, task: "_Task") -> "_Task":
        """Give ``task`` to the pool (when it holds files); the next task to fill."""
        if task.paths and not task.sent:
            task.future = self.submit(task.paths)
            task.sent = True
        return _Task() if task.sent else task

    def submit(self, paths: List[Path]) -> Optional[Future]:
        import multiprocessing
        from concurrent.futures.process import BrokenProcessPool

        for _ in range(2):
            if self.pool is None:
                from . import engine, notebook  # noqa: F401  loaded once, before the workers fork

                self.pids = multiprocessing.get_context("fork").SimpleQueue()
                self.pool = _fork_pool(self.jobs, self.options, self.pids)
            try:
                return self.pool.submit(_work, paths)
            except BrokenProcessPool:
                self.pool.shutdown(wait=False, cancel_futures=True)
                self.pool = None
        return None

    def alone(self, path: Path) -> Outcome:
        """Retry a file whose worker died, in a worker of its own: a second
        death names this file as the culprit instead of its neighbours."""
        from concurrent.futures.process import BrokenProcessPool

        pool = _fork_pool(1, self.options, None)
        try:
            return pool.submit(_work, [path]).result()[0]
        except BrokenProcessPool:
            return Outcome(path, problem=f"{path}: the worker process died while processing it "
                                         "(a crash in native code, or out of memory)")
        finally:
            pool.shutdown(wait=True)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def terminate(self) -> None:
        """Stop now: drop queued work and kill the workers (nothing of theirs
        is on disk: all writes happen in the parent)."""
        if self.pool is None:
            return
        self.pool.shutdown(wait=False, cancel_futures=True)
        while not self.pids.empty():
            try:
                os.kill(self.pids.get(), signal.SIGTERM)
            except ProcessLookupError:  # already gone
                pass
        self.pool = None


def _fork_pool(jobs: int, options: Options, pids) -> ProcessPoolExecutor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=_init_worker, initargs=(options, pids))


_worker_options: Optional[Options] = None


def _init_worker(options: Options, pids) -> None:
    """Ctrl-C reaches the whole process group; only the parent handles it.
    The worker tells its pid (the pool has no public list of its processes)."""
    global _worker_options
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_options = options
    if pids is not None:
        pids.put(os.getpid())


def _work(paths: List[Path]) -> List[Outcome]:
    return [process(path, _worker_options) for path in paths]


def _start(path: Path, cache: Optional[Cache], task: Optional[_Task]) -> _Pending:
    """The file's outcome when the cache has it; else the file joins ``task``
    (None: it will run in this process)."""
    if cache is not None and path.suffix != ".ipynb":
        try:
            source = files.read(path)
        except files.Unreadable as err:
            return _Pending(path, Outcome(path, problem=str(err)))
        result = cache.get(path, source.raw, source.text)
        if result is not None:
            return _Pending(path, _checked(Outcome(path, result, source)))
    if task is None:
        return _Pending(path)
    task.paths.append(path)
    return _Pending(path, task=task, index=len(task.paths) - 1)


def _finish(pending: _Pending, options: Options, cache: Optional[Cache], workers: _Workers,
            on_done: Optional[Callable[[Outcome], None]]) -> Outcome:
    outcome = pending.outcome
    if outcome is None:
        outcome = _computed(pending, options, workers)
        if cache is not None and outcome.result is not None and outcome.source is not None:
            cache.put(outcome.path, outcome.source.raw, outcome.result)
    if on_done:
        on_done(outcome)
    return outcome


def _computed(pending: _Pending, options: Options, workers: _Workers) -> Outcome:
    task = pending.task
    if task is None or task.future is None:
        return process(pending.path, options)
    from concurrent.futures.process import BrokenProcessPool  # loaded with the pool

    try:
        return task.future.result()[pending.index]
    except BrokenProcessPool:
        return workers.alone(pending.path)
    except Exception as err:  # e.g. an unpicklable result: this file's failure, not the batch's
        if len(task.paths) > 1:  # maybe another file's: each file of the task is asked for alone
            pending.task, pending.index = _Task(), 0
            pending.task.paths.append(pending.path)
            workers.send(pending.task)
            return _computed(pending, options, workers)
        return Outcome(pending.path, problem=f"{pending.path}: internal error in a worker: "
                                             f"{type(err).__name__}: {err}")


def _checked(outcome: Outcome) -> Outcome:
    """Mark an outcome whose result could not be produced as a problem."""
    result = outcome.result
    if result is not None and result.status in (Status.SKIPPED, Status.FAILED):
        reason = result.reason or result.status.value
        # a notebook's reasons already name it (and the cell)
        outcome.problem = reason if reason.startswith(str(outcome.path)) else f"{outcome.path}: {reason}"
    return outcome


@dataclass(eq=False, repr=False)
class Summary:
    scanned: int = 0
    changed: int = 0
    flagged: int = 0  # files with at least one finding
    skipped: int = 0
    findings: Counter = field(default_factory=Counter)
    problems: List[str] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.scanned += 1
        if outcome.result and outcome.result.changed:
            self.changed += 1
        if outcome.failed:
            self.skipped += 1
            self.problems.append(outcome.problem or f"{outcome.path}: {outcome.status.value}")
        if outcome.result and outcome.result.diagnostics:
            self.flagged += 1
            self.findings.update(d.recipe for d in outcome.result.diagnostics)
