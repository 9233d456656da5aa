"""The binlog reader in a process of its own (``[replication] reader = "process"``, the
default): reading and decoding the source's binlog no longer shares the applying
thread's interpreter lock.

Why: on sysbench's small transactions the reader thread was half of the daemon's CPU and
the lock was held ~90 % of the time (py-spy ``--gil``; bench/RESULTS.md, "Issue 34, fourth
session"): the applying thread waited for the reader's turns. In a process of its own the
reader runs on another core; what crosses is the transactions it read, in batches
(applier.ops.readerwire: row changes as plain tuples, a table's definition once, large
rows events as their bytes), and taking them costs the daemon a fraction of what
reading did.

How: `start` forks the daemon's process at the point where the reader thread would
start (only the forking thread exists in the child, which runs `Pipeline._read`, the
same loop the reader thread runs, into a queue of its own); a sender thread in the child
sends what waits in that queue as one frame; a receiver thread in the daemon unpickles
the frames and puts the items into the pipeline's queue, where the applying thread takes
them exactly as from the reader thread. So the pipeline's guarantees hold as they are
(order, one source transaction one target transaction, errors at their place in the
stream, bounded memory on both sides: each queue has the pipeline's budget, and the pipe
between them blocks the sender when full).

The child:
  * dies with the daemon (``PR_SET_PDEATHSIG``; and a write to a closed pipe ends it);
  * takes the default action for the daemon's signals (a stop is the daemon's: it kills
    the child, which holds nothing the next session needs);
  * holds no copy of the daemon's sockets or pipes (each inherited one is pointed at
    /dev/null at once): a connection the daemon closes is closed for its server, and a
    pipe the daemon closes reaches its end (the verification process sees it);
  * leaves with ``os._exit``: nothing of the daemon's clean-up runs twice.

An error in the child travels as the exception object (its ``__cause__`` too: the daemon
counts the driver's error code); one that does not survive pickling arrives as the
nearest applier error with its message. A child that ends without saying why (killed)
is a TransientError: the daemon resumes from its checkpoint.
"""

from __future__ import annotations

import ctypes
import fcntl
import logging
import logging.handlers
import os
import signal
import stat
import threading
from multiprocessing import Pipe

from applier.binlog.events import WIRE_FROM
from applier.errors import ReplicationStopped, TransientError
from applier.ops import handoff as pipe
from applier.ops.readerwire import Decoder, Encoder

log = logging.getLogger(__name__)

LOG = "log"  # an item: a log record of the child's (handled by the daemon's logging)
FIRST = "first"  # an item: the source sent its first event (BinlogSource.on_first_event)
# a rows event of at least this many bytes crosses as its bytes (the daemon's applier
# applies it as it is or decodes it); smaller ones are decoded in the child (one event's
# decoding has a fixed cost)
RAW_FROM = WIRE_FROM
PIPE_BYTES = 1 << 20  # the pipe's buffer (F_SETPIPE_SZ), when the system allows it
_F_SETPIPE_SZ = 1031
_PR_SET_PDEATHSIG = 1


class ReaderProcess:
    """The pipeline's reader in a forked child (`start`), its items forwarded into the
    pipeline's queue by a receiver thread; `stop` ends both."""

    def __init__(self, pipeline, forward):
        self.pipeline = pipeline
        self.forward = forward  # (item) -> True once the stream's last item was put
        self.pid: int | None = None
        self._recv = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._reaping = threading.Lock()  # the child is reaped once, then never signalled
        # the tables whose rows events the child keeps as bytes (applier.binlog.rawtables),
        # told to the child through a pipe of their own as the applier names them
        self._tables = getattr(pipeline.source, "raw_tables", None)
        self._told = None

    def start(self) -> None:
        recv, send = Pipe(duplex=False)
        _bigger_pipe(send.fileno())
        told, tell = Pipe(duplex=False) if self._tables is not None else (None, None)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                recv.close()
                keep = [send.fileno()]
                if told is not None:
                    tell.close()
                    keep.append(told.fileno())
                _child_setup(parent, keep=keep)
                _child_run(self.pipeline, send, told)
                code = 0
            except BaseException:  # noqa: BLE001 - the daemon hears of it as an early end
                pass
            finally:
                os._exit(code)
        send.close()
        self.pid, self._recv = pid, recv
        if told is not None:
            told.close()
            self._told = tell
            self._tables.listen(self._tell)
        self._thread = threading.Thread(target=self._receive, name="binlog-receiver",
                                        daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        decoder = Decoder(pipe.HEARTBEAT)
        try:
            while True:
                try:
                    frame = self._recv.recv_bytes()
                except (EOFError, OSError):
                    if not self._stopping:
                        self.forward((pipe.ERROR, TransientError(
                            f"the binlog reader process ended ({self._ended()}); resume "
                            "from the last checkpoint")))
                    return
                for item in decoder.items(frame) or ():
                    if item[0] == LOG:  # the child's log record, to this process's handlers
                        record = item[1]
                        logging.getLogger(record.name).handle(record)
                    elif self.forward(item):
                        return
        except pipe.Closed:  # the pipeline was closed: the applier side went away
            return
        except BaseException as exc:  # noqa: BLE001 - a frame that cannot be read
            try:
                self.forward((pipe.ERROR, exc))
            except pipe.Closed:
                return

    def _ended(self) -> str:
        """How the child ended (reaped here: its pipe's end is its exit), for the message."""
        with self._reaping:
            if self.pid is None:
                return "stopped"
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:
                return "already reaped"
            finally:
                self.pid = None
        if os.WIFSIGNALED(status):
            return f"killed by signal {os.WTERMSIG(status)}"
        return f"exit status {os.WEXITSTATUS(status)}"

    def _tell(self, message: tuple) -> None:
        """A change of the tables the child reads as bytes (lost with a child that ended:
        the next one is told the whole state at its start)."""
        try:
            self._told.send(message)
        except (OSError, ValueError):
            pass

    def stop(self) -> None:
        """End the child (it may be waiting for the source or for room) and the receiver."""
        self._stopping = True
        if self._told is not None:
            self._tables.unlisten(self._tell)
            self._told.close()
            self._told = None
        with self._reaping:  # never a signal to a number the child no longer holds
            if self.pid is not None:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
                self.pid = None
        if self._thread is not None:
            self._thread.join(timeout=30)
            if self._thread.is_alive():
                log.warning("the binlog receiver thread did not end within 30 s")
        if self._recv is not None:
            self._recv.close()


def _bigger_pipe(fd: int) -> None:
    try:
        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:  # a system limit (pipe-max-size): the default buffer does
        pass


def _child_setup(parent: int, keep: list[int]) -> None:
    """Die with the daemon; default signal actions; no copy of the daemon's sockets and
    pipes (each pointed at /dev/null, so their numbers stay taken)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the daemon died before the line above
        os._exit(1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
                signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2 or fd == devnull or fd in keep:
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:  # the listing's own descriptor, closed since
            continue
        if stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode):
            os.dup2(devnull, fd)


def _child_run(pipeline, send, told=None) -> None:
    """The reader loop into a queue of the child's own, sent frame by frame; ``told``:
    the daemon's tables to keep as bytes, read by a thread into the source's set."""
    source = pipeline.source
    if told is not None:
        threading.Thread(target=_told, args=(told, source.raw_tables),
                         name="binlog-raw-tables", daemon=True).start()
    queue = pipeline.queue = pipe.Handoff(pipeline.queue.budget, pipeline.queue.depth)
    pipeline.on_read = None  # the daemon's side calls it as items arrive
    if hasattr(source, "raw_from"):
        source.raw_from = RAW_FROM  # large rows events applied or decoded by the daemon
    if hasattr(source, "on_first_event"):
        source.on_first_event = lambda: queue.put((FIRST,))
    _logs_to(queue)
    sender = threading.Thread(target=_send, args=(queue, send, Encoder(pipe.HEARTBEAT)),
                              name="binlog-sender", daemon=True)
    sender.start()
    pipeline._read()
    sender.join()


def _told(told, tables) -> None:
    """Each change the daemon tells, made on the child's copy of the set."""
    try:
        while True:
            tables.apply(told.recv())
    except (EOFError, OSError):
        return


class _LogItems(logging.handlers.QueueHandler):
    """The child's log records as items (formatted here: their arguments need not
    pickle), handled by the daemon's own logging configuration where they arrive."""

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put((LOG, record), force=True)
        except pipe.Closed:
            pass


def _logs_to(queue) -> None:
    """Every log record of the child goes to the daemon (no handler of the daemon's runs
    here: each is the daemon's, on descriptors the child no longer holds)."""
    manager = logging.root.manager
    for logger in [logging.root, *manager.loggerDict.values()]:
        if isinstance(logger, logging.Logger):
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
    logging.root.addHandler(_LogItems(queue))


def _send(queue, send, encoder: Encoder) -> None:
    """What waits in the queue, as frames, until the stream's last item; an item that
    cannot be made a frame is sent as the error that stops replication there (after the
    items before it)."""
    try:
        while True:
            items = queue.take_all()
            try:
                frames = encoder.frames(items)
            except Exception:  # noqa: BLE001 - found item by item below
                frames, items = _until_failing(encoder, items)
            for frame in frames:
                send.send_bytes(frame)
            if any(item[0] in (pipe.DONE, pipe.ERROR) for item in items):
                return  # (a log record may follow the stream's last item)
    except BaseException:  # noqa: BLE001 - the daemon is gone (a closed pipe): end
        queue.close()


def _until_failing(encoder: Encoder, items: list) -> tuple[list[bytes], list]:
    """The frames of the items before the first that cannot be made one, then the error
    naming it; and the items sent (the error last)."""
    frames: list[bytes] = []
    for i, item in enumerate(items):
        try:
            frames.extend(encoder.frames([item]))
        except Exception as exc:  # noqa: BLE001 - named to the daemon, then the end
            error = (pipe.ERROR, ReplicationStopped(
                f"the binlog reader process cannot hand over what it read "
                f"({type(exc).__name__}: {exc}); replication stops here (nothing of that "
                'transaction was applied); [replication] reader = "thread" reads in the '
                "daemon"))
            return frames + encoder.frames([error]), items[:i] + [error]
    return frames, items
