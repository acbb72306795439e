"""The engine's command line: argparse in, JSON lines out (see disklab.engine).

Exit status: 0 done; 1 an I/O error (an error line says what, in the filesystem's terms);
2 bad arguments; 128 + signal number when SIGTERM or SIGINT stopped it (a summary flagged
"partial": true says what was done until then).
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
import traceback
from types import FrameType

from disklab.core.system.fsprobe import explain
from disklab.engine.iopath import PATHS
from disklab.engine.report import emit, interval, summary
from disklab.engine.worker import Job, LayoutError, Runner, prepare_file

MODES = ("write", "rewrite", "read", "randread", "randwrite")
NEEDS_DIRECT = {
    "aio": ("io aio needs direct I/O (--direct): Linux runs asynchronous I/O on buffered "
            "(page-cache) files synchronously inside io_submit; use io auto or psync"),
    "uring": ("io uring needs direct I/O (--direct): the engine's io_uring path keeps O_DIRECT "
              "requests in flight (buffered ones would go to the kernel's io-wq threads, a "
              "thread a request); use io auto or psync"),
}
EXIT_ERROR = 1
EXIT_USAGE = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m disklab.engine",
                                description="DiskLab's built-in I/O engine")
    p.add_argument("--mode", choices=MODES, required=True)
    p.add_argument("--file", action="append", required=True,
                   help="the file (or block device) of one stream; repeat for more streams")
    p.add_argument("--block-size", type=int, action="append", required=True,
                   help="bytes per call; once for every stream, or once per --file in order")
    p.add_argument("--size", type=int, required=True, help="bytes per stream")
    p.add_argument("--queue-depth", type=int, default=1, help="threads per stream")
    p.add_argument("--direct", action="store_true", help="O_DIRECT, aligned buffers")
    p.add_argument("--sync", action="store_true", help="O_SYNC on writes")
    p.add_argument("--fsync", action="store_true", help="fsync at the end of writes (timed)")
    p.add_argument("--runtime", type=float, default=0.0,
                   help="seconds; > 0 runs this long, wrapping around the file")
    p.add_argument("--interval", type=float, default=0.5, help="seconds between interval lines")
    p.add_argument("--seed", type=int, default=1, help="of the random block order")
    p.add_argument("--io", choices=PATHS, default="auto",
                   help="the I/O path: pread/pwrite workers (psync), Linux native AIO (aio, "
                        "O_DIRECT only), io_uring (uring, O_DIRECT only), or auto: uring for "
                        "O_DIRECT at queue depth > 1 where the kernel allows it, else aio")
    p.add_argument("--loop", choices=("auto", "python"), default="auto",
                   help="the accounting loop: auto (in C where it was built at install, else "
                        "Python) or python (engine/loop.py, the reference: to compare the two)")
    p.add_argument("--prepare", action="store_true",
                   help="only lay out the files (sequential writes, fsync), for a later run")
    return p.parse_args(argv)


def _usage_problem(args: argparse.Namespace) -> str | None:
    sizes = args.block_size
    if len(sizes) not in (1, len(args.file)):
        return (f"{len(sizes)} block sizes for {len(args.file)} files: give one for every "
                "stream or one per --file")
    if min(sizes) <= 0 or args.size <= 0:
        return "block size and size must be positive"
    for bs in sizes:
        if args.size % bs:
            return f"size {args.size} is not a multiple of block size {bs}"
        if args.direct and bs % 512:
            return f"O_DIRECT needs a block size that is a multiple of 512 (got {bs})"
    if args.queue_depth < 1:
        return "queue depth must be at least 1"
    if args.interval <= 0 or args.runtime < 0:
        return "interval must be positive and runtime not negative"
    if args.io in NEEDS_DIRECT and not args.direct and not args.prepare:
        return NEEDS_DIRECT[args.io]
    if len(set(args.file)) != len(args.file):
        return "each stream needs a file of its own"
    return None


class _Signals:
    """SIGTERM/SIGINT: stop cleanly. Remembers which, for the exit status."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.halt = [False]
        self.runner: Runner | None = None

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        runner = self.runner
        if runner is not None and runner.done.is_set():
            return  # all the work is done: nothing partial about it
        self.signum = signum
        self.halt[0] = True
        if runner is not None:
            runner.halt(interrupted=True)


def _prepare(args: argparse.Namespace, signals: _Signals) -> int:
    for path in args.file:
        try:
            finished = prepare_file(path, args.size, args.direct, signals.halt)
        except OSError as e:
            emit({"type": "error", "message": explain(e, e.filename or path, direct=args.direct,
                                                      block_size=args.block_size[0])})
            return EXIT_ERROR
        if not finished:
            emit({"type": "error", "message": f"interrupted while laying out {path}"})
            return 128 + (signals.signum or signal.SIGTERM)
    emit({"type": "prepared", "files": args.file, "bytes": args.size})
    return 0


def _measure(job: Job, every: float, signals: _Signals) -> int:
    runner = Runner(job)
    try:
        runner.open()
    except OSError as e:
        runner.close()
        emit({"type": "error", "message": explain(e, e.filename or job.files[0],
                                                  direct=job.direct, opening=True)})
        return EXIT_ERROR
    except LayoutError as e:
        runner.close()
        emit({"type": "error", "message": str(e)})
        return EXIT_ERROR
    signals.runner = runner
    if signals.halt[0]:  # a signal before the run began
        runner.halt(interrupted=True)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            runner.run()
        except BaseException as e:  # a defect of the engine: an error, not a summary of nothing
            failure.append(e)
            traceback.print_exc()  # on stderr: in the tool's log

    worker = threading.Thread(target=run, name="engine", daemon=True)
    worker.start()
    next_line = time.perf_counter() + every
    while True:
        now = time.perf_counter()
        wait = next_line - now
        timed = bool(job.runtime > 0 and runner.started and not runner.halted)
        if timed:
            wait = min(wait, runner.started + job.runtime - now)
        if runner.done.wait(max(0.0, wait)):
            break
        now = time.perf_counter()
        if timed and now >= runner.started + job.runtime:
            runner.halt()  # the end of a time-based run: not partial
        if now >= next_line:
            next_line += every * max(1, int((now - next_line) // every) + 1)
            emit(interval(runner))
    worker.join()
    if failure:
        runner.close()
        emit({"type": "error",
              "message": f"internal error of the engine: {type(failure[0]).__name__}: "
                         f"{failure[0]} (the traceback is on stderr); no figures"})
        return EXIT_ERROR
    emit(interval(runner))
    runner.close()
    emit(summary(runner))
    for s in runner.streams:
        if s.error is not None:
            emit({"type": "error", "message": explain(
                s.error, s.error.filename or s.path, direct=job.direct,
                block_size=s.block_size)})
            return EXIT_ERROR
    if runner.interrupted:
        return 128 + (signals.signum or signal.SIGTERM)
    return 0


def main(argv: list[str] | None = None, early_signals: list[int] | None = None) -> int:
    """Run the engine; `early_signals` are those caught while it was still being imported."""
    signals = _Signals()
    signals.install()
    if early_signals:
        signals.signum = early_signals[0]
        signals.halt[0] = True
    args = parse_args(argv)
    problem = _usage_problem(args)
    if problem:
        emit({"type": "error", "message": problem})
        return EXIT_USAGE
    if args.prepare:
        return _prepare(args, signals)
    sizes = args.block_size
    job = Job(args.mode, args.file, sizes[0], args.size, args.queue_depth, args.direct,
              args.sync, args.fsync, args.runtime, args.seed,
              stream_block_sizes=tuple(sizes) if len(sizes) > 1 else (), io=args.io,
              loop=args.loop)
    return _measure(job, args.interval, signals)
