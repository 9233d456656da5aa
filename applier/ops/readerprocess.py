"""The binlog reader in a process of its own (``[replication] reader = "process"``, the
default): reading and decoding the source's binlog no longer shares the applying
thread's interpreter lock.

Why: on sysbench's small transactions the reader thread was half of the daemon's CPU and
the lock was held ~90 % of the time (py-spy ``--gil``; bench/RESULTS.md, "Issue 34, fourth
session"): the applying thread waited for the reader's turns. In a process of its own the
reader runs on another core; what crosses is the transactions it read, pickled in
batches (a table's definition once, then by number), and unpickling costs the daemon a
fraction of what reading did.

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
import logging
import logging.handlers
import os
import pickle
import signal
import stat
import threading
from collections.abc import Iterator
from multiprocessing import Pipe

from applier.binlog import events
from applier.binlog.assembler import expand
from applier.binlog.events import RawRows, RowChange, Transaction
from applier.binlog.rows.rowimage import TableCodecs
from applier.core.types import SourceTable
from applier.errors import ReplicationStopped, TransientError
from applier.ops import pipeline as pipe

log = logging.getLogger(__name__)

_TABLES, _FORGET, _ITEMS = b"t", b"f", b"i"  # a frame's first byte
_RAW = "raw"  # a RawRows's tuple on the wire (a row change's first field is its kind)
_HEARTBEAT = "heartbeat"  # the wire's kind for the pipeline's HEARTBEAT
LOG = "log"  # an item: a log record of the child's (handled by the daemon's logging)
FIRST = "first"  # an item: the source sent its first event (BinlogSource.on_first_event)
# a rows event of at least this many bytes crosses as its bytes, decoded by the daemon
# (smaller ones decoded in the child: one event's decoding has a fixed cost)
RAW_FROM = 2048
TABLES_KEPT = 4096  # table definitions both sides keep by number at most
PIPE_BYTES = 1 << 20  # the pipe's buffer (F_SETPIPE_SZ), when the system allows it
_F_SETPIPE_SZ = 1031
_PR_SET_PDEATHSIG = 1


class Encoder:
    """Items to frames (the child's side). Pure: tests run it without a process.

    A row change crosses as a plain tuple with its table's number (a table's definition
    is sent once, in a frame of its own): pickling named tuples and a callback per object
    cost 18 us per row on bench_catchup's rows, plain tuples a fraction of that
    (bench/RESULTS.md, "Issue 34, fourth session"). ``heartbeat`` (the pipeline's marker
    object) crosses as a kind of its own."""

    def __init__(self, heartbeat: object, kept: int = TABLES_KEPT):
        self.heartbeat = heartbeat
        self.kept = kept
        self._numbers: dict[int, tuple[int, SourceTable]] = {}  # id -> (number, table)
        self._next = 0
        self._new: dict[int, SourceTable] = {}
        self._keys: list[int] = []  # the ids numbered by the frame being made

    def frames(self, items: list) -> list[bytes]:
        out: list[bytes] = []
        if len(self._numbers) >= self.kept:
            self._numbers.clear()
            out.append(_FORGET)
        self._new, self._keys = {}, []
        try:
            wire = pickle.dumps([self._wire(item) for item in items], pickle.HIGHEST_PROTOCOL)
        except BaseException:  # nothing sent: the numbers given meanwhile are not known
            for key in self._keys:
                del self._numbers[key]
            raise
        if self._new:
            out.append(_TABLES + pickle.dumps(self._new, pickle.HIGHEST_PROTOCOL))
        out.append(_ITEMS + wire)
        return out

    def _wire(self, item):
        kind = item[0]
        if kind == pipe.TXN:
            txn = item[1]
            if txn is self.heartbeat:
                return (_HEARTBEAT,)
            return (pipe.TXN, txn.end, txn.timestamp, txn.streamed, self._changes(txn.changes))
        if kind == pipe.PART:
            return (pipe.PART, self._changes(item[1]), item[2])
        if kind == pipe.END:
            return (pipe.END, self._changes(item[1]), item[2], item[3])
        if kind == pipe.ERROR:
            exc = item[1]
            cause = exc.__cause__
            return (pipe.ERROR, _survives(exc), None if cause is None else _survives(cause))
        return item  # DONE, FIRST

    def _changes(self, changes) -> list:
        numbers, number = self._numbers, self._number
        out = []
        for c in changes:
            t = type(c)
            if t is RowChange:
                hit = numbers.get(id(c[1]))
                out.append((c[0], hit[0] if hit is not None else number(c[1]), c[2], c[3],
                            c[4]))
            elif t is RawRows:  # its table and codecs, by number
                hit = numbers.get(id(c.codecs))
                n = hit[0] if hit is not None else number(
                    (c.table, tuple(c.codecs)), c.codecs)  # a plain tuple: no cache in it
                out.append((_RAW, c.type_code, n, c.body, c.where))
            else:  # a Statement: as it is
                out.append(c)
        return out

    def _number(self, what, key=None) -> int:
        """A number for a table, or for a (table, codecs) pair keyed by its codecs."""
        n = self._next
        key = id(what if key is None else key)
        self._numbers[key] = (n, what)  # kept: ids stay unique meanwhile
        self._keys.append(key)
        self._new[n] = what
        self._next += 1
        return n


class Decoder:
    """Frames to items (the daemon's side); None for a frame that carries no items."""

    def __init__(self, heartbeat: object):
        self.heartbeat = heartbeat
        self.tables: dict[int, SourceTable] = {}

    def items(self, frame: bytes) -> Iterator | None:
        kind, body = frame[:1], memoryview(frame)[1:]
        if kind == _TABLES:
            for n, what in pickle.loads(body).items():  # a table, or (table, codecs)
                self.tables[n] = what if type(what) is not tuple \
                    else (what[0], TableCodecs(what[1]))
            return None
        if kind == _FORGET:
            self.tables.clear()
            return None
        if kind != _ITEMS:
            raise ReplicationStopped(f"the binlog reader process sent a frame of unknown "
                                     f"kind {bytes(kind)!r}")
        # one by one: an item that cannot be decoded raises after those before it
        return (self._item(w) for w in pickle.loads(body))

    def _item(self, w):
        kind = w[0]
        if kind == pipe.TXN:
            return (pipe.TXN, Transaction(w[1], self._changes(w[4]), w[2], w[3]))
        if kind == pipe.PART:
            return (pipe.PART, self._changes(w[1]), w[2])
        if kind == pipe.END:
            return (pipe.END, self._changes(w[1]), w[2], w[3])
        if kind == _HEARTBEAT:
            return (pipe.TXN, self.heartbeat)
        if kind == pipe.ERROR:
            exc, cause = w[1], w[2]
            if cause is not None:
                exc.__cause__ = cause
            return (pipe.ERROR, exc)
        return w  # DONE, FIRST

    def _changes(self, wire: list) -> list:
        tables, new = self.tables, tuple.__new__
        out = []
        for c in wire:
            if type(c) is not tuple:  # a Statement
                out.append(c)
            elif c[0] == _RAW:
                table, codecs = tables[c[2]]
                out.extend(expand(RawRows(c[1], table, codecs, c[3], c[4])))
            else:
                out.append(new(RowChange, (c[0], tables[c[1]], c[2], c[3], c[4])))
        return out


def _survives(exc: BaseException) -> BaseException:
    """``exc`` when it comes back from pickling as itself (type and message), else the
    nearest applier error with its message."""
    try:
        back = pickle.loads(pickle.dumps(exc, pickle.HIGHEST_PROTOCOL))
        if type(back) is type(exc) and str(back) == str(exc):
            return exc
    except Exception:  # noqa: BLE001 - any failure to pickle: the substitute below
        pass
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (TransientError, OSError)):
        return TransientError(text)
    return ReplicationStopped(text, getattr(exc, "code", 0) or 0)


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

    def start(self) -> None:
        recv, send = Pipe(duplex=False)
        _bigger_pipe(send.fileno())
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                recv.close()
                _child_setup(parent, keep=send.fileno())
                _child_run(self.pipeline, send)
                code = 0
            except BaseException:  # noqa: BLE001 - the daemon hears of it as an early end
                pass
            finally:
                os._exit(code)
        send.close()
        self.pid, self._recv = pid, recv
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

    def stop(self) -> None:
        """End the child (it may be waiting for the source or for room) and the receiver."""
        self._stopping = True
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
        import fcntl
        fcntl.fcntl(fd, _F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:  # a system limit (pipe-max-size): the default buffer does
        pass


def _child_setup(parent: int, keep: int) -> None:
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
        if fd <= 2 or fd in (keep, devnull):
            continue
        try:
            mode = os.fstat(fd).st_mode
        except OSError:  # the listing's own descriptor, closed since
            continue
        if stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode):
            os.dup2(devnull, fd)


def _child_run(pipeline, send) -> None:
    """The reader loop into a queue of the child's own, sent frame by frame."""
    source = pipeline.source
    queue = pipeline.queue = pipe.Handoff(pipeline.queue.budget, pipeline.queue.depth)
    pipeline.on_read = None  # the daemon's side calls it as items arrive
    pipeline.weigh = events.units
    if hasattr(source, "raw_from"):
        source.raw_from = RAW_FROM  # large rows events decoded by the daemon
    if hasattr(source, "on_first_event"):
        source.on_first_event = lambda: queue.put((FIRST,))
    _logs_to(queue)
    sender = threading.Thread(target=_send, args=(queue, send, Encoder(pipe.HEARTBEAT)),
                              name="binlog-sender", daemon=True)
    sender.start()
    pipeline._read()
    sender.join()


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
            if items[-1][0] in (pipe.DONE, pipe.ERROR):
                return
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
