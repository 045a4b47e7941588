"""Keep the derived indices in step with the vault: watch it, debounce bursts, hand over batches of paths.

The watcher never trusts event types. Editors save by rename, vim renames the note away before
writing it again, and a `git checkout` deletes and recreates hundreds of files in a second, so the
only thing an event says reliably is "look at this path again". The watcher collects those paths,
waits for a quiet moment (but never longer than `max_wait` after the first event of a batch), and
calls `on_batch`, which reconciles each path against the disk: present means upsert, missing means
delete. A folder created, moved in, moved away or removed is named as a folder: its whole subtree is
reconciled (what is found below it, and what was indexed below it), not the whole vault, since the
files of a folder moved in, or written before its own watch existed, bring no events of their own.
A full reconcile is asked for when the vault folder itself changes, when the kernel's event queue
overflowed (events were lost), when a folder's watch could not be added, and by the periodic rescan, the
safety net for anything else. Dot-folders (`.memdir/`, `.git/`) are not watched at all: see folder_watches.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Callable, Iterable, Literal

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from vault.paths import is_memory_path

from .folder_watches import FolderWatches

logger = logging.getLogger("memdir.watcher")

Mode = Literal["native", "polling"]

# Opens and read-only closes are left out on purpose: the indexer reads every note it is given,
# and with them subscribed each batch would schedule the next one. Directory "modified" events
# fire for every save in a folder and say nothing the file events don't.
WATCHED_EVENTS: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


# watchdog (7.1) rebuilds its watches when the kernel's inotify queue overflows but tells no event handler: it
# only logs this warning, on its reader thread. Every watcher of a process shares that one inotify instance, so
# all of them lost events. (Seen only while that logger lets warnings through, as memdir's logging does.)
OVERFLOW_LOGGER = "watchdog.observers.inotify_c"
OVERFLOW_MESSAGE = "Inotify queue overflowed"


class _OverflowListener(logging.Handler):
    """Calls `on_overflow` when watchdog logs that the kernel's event queue overflowed."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith(OVERFLOW_MESSAGE):
            self._on_overflow()


@dataclass(frozen=True, slots=True)
class Batch:
    """Absolute paths to reconcile against the disk, and folders whose whole subtree is to be reconciled;
    `full` asks for a reconcile of the whole vault."""

    paths: frozenset[Path] = field(default_factory=frozenset)
    full: bool = False
    folders: frozenset[Path] = field(default_factory=frozenset)


def outside_dot_folders(root: Path, path: Path) -> bool:
    """True for the vault itself and anything below it that no dot-folder (or dot-name) contains."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return False
    return not any(part.startswith(".") for part in parts)


def event_paths(event: FileSystemEvent) -> list[Path]:
    """The source and, for moves, the destination of an event."""
    paths = [Path(os.fsdecode(event.src_path))] if event.src_path else []
    if event.dest_path:
        paths.append(Path(os.fsdecode(event.dest_path)))
    return paths


class _Handler(FileSystemEventHandler):
    """Forwards every watchdog event to one function, and counts them."""

    def __init__(self, forward: Callable[[FileSystemEvent], None]) -> None:
        super().__init__()
        self._forward = forward
        self.received = 0  # written by the dispatch thread alone

    def on_any_event(self, event: FileSystemEvent) -> None:
        """Called on watchdog's dispatch thread."""
        self.received += 1
        self._forward(event)


class VaultWatcher:
    """Watch a vault folder and call `on_batch` with debounced batches of touched memory paths."""

    def __init__(
        self,
        root: Path,
        on_batch: Callable[[Batch], None],
        *,
        debounce: float = 0.25,
        max_wait: float = 2.0,
        rescan_interval: float | None = 300.0,
        polling: bool = False,
        polling_interval: float = 1.0,
    ) -> None:
        _check_timings(debounce, max_wait, rescan_interval, polling_interval)
        # absolute but not resolved: watchdog builds event paths from the path it was given
        self.root = Path(root).absolute()
        self._on_batch = on_batch
        self._debounce = debounce
        self._max_wait = max_wait
        self._rescan_interval = rescan_interval
        self._force_polling = polling
        self._polling_interval = polling_interval
        self.mode: Mode = "polling" if polling else "native"

        self._cond = threading.Condition()  # guards the pending batch, the deadlines and `_stopping`
        self._paths: set[Path] = set()
        self._folders: set[Path] = set()
        self._full = False
        self._first_event: float | None = None
        self._last_event = 0.0
        self._next_rescan: float | None = None
        self._stopping = False

        self._deliver_lock = threading.Lock()  # one on_batch at a time, in the order batches were taken
        self._delivered = threading.Condition()
        self._batches_delivered = 0

        self._observer: BaseObserver | None = None
        self._handler = _Handler(self._on_event)
        self._folder_watches: FolderWatches | None = None
        self._overflow = _OverflowListener(self._on_overflow)
        self._worker: threading.Thread | None = None
        self._started = False
        self._stopped = False

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching; falls back to polling when the native observer cannot be set up."""
        if self._started:
            raise RuntimeError("a VaultWatcher can be started only once")
        if not self.root.is_dir():
            # checked here so that a missing vault is not mistaken for an exhausted inotify
            raise NotADirectoryError(f"vault folder {self.root} does not exist")
        self._started = True
        self._observer = self._start_observer()
        self._resync_folder_watches()  # a top-level folder made while the observer started has no watch yet
        logging.getLogger(OVERFLOW_LOGGER).addHandler(self._overflow)
        if self._rescan_interval is not None:
            self._next_rescan = time.monotonic() + self._rescan_interval
        self._worker = threading.Thread(target=self._run, name="memdir-watcher", daemon=True)
        self._worker.start()
        logger.info("watching %s (%s)", self.root, self.mode)

    def stop(self) -> None:
        """Stop watching and join every thread; pending paths are dropped (call flush_now first)."""
        if not self._started or self._stopped:
            return
        self._stopped = True
        if self._observer is not None:
            self._observer.stop()
            self._observer.join()
        logging.getLogger(OVERFLOW_LOGGER).removeHandler(self._overflow)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join()
        # what the watches cost: each event is one watchdog built and dispatched (bench/sessions.py reads this line)
        logger.info("stopped watching %s: %d file events received", self.root, self.events_received)

    @property
    def watched_folders(self) -> set[str]:
        """The top-level folders with a watch of their own (none when the vault is watched as one tree)."""
        return self._folder_watches.folders if self._folder_watches is not None else set()

    @property
    def events_received(self) -> int:
        """How many file events watchdog has handed to this watcher, ignored ones included."""
        return self._handler.received

    def __enter__(self) -> VaultWatcher:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _start_observer(self) -> BaseObserver:
        """The native observer if the OS lets us have one, else a polling one."""
        if not self._force_polling:
            try:
                observer = self._scheduled(Observer)
                self.mode = "native"
                return observer
            except OSError as error:
                # ENOSPC (max_user_watches), EMFILE (max_user_instances) or a file system without
                # inotify: polling is slower but sees every change the periodic rescan would
                logger.warning(
                    "native file watching is unavailable for %s (%s); polling every %.2g s instead",
                    self.root, error, self._polling_interval,
                )
        self.mode = "polling"
        return self._scheduled(lambda: PollingObserver(timeout=self._polling_interval))

    def _scheduled(self, make: Callable[[], BaseObserver]) -> BaseObserver:
        """Build, schedule and start an observer, releasing its threads and fds if any step fails."""
        observer = make()
        try:
            # set before the observer starts: its first event may come at once
            self._folder_watches = FolderWatches(observer, self.root, self._handler, WATCHED_EVENTS)
            self._folder_watches.schedule()
            observer.start()
        except BaseException:
            # stop() on a never-started observer still closes the inotify fd and joins its reader
            observer.stop()
            raise
        return observer

    def _resync_folder_watches(self) -> None:
        """At start: watch a top-level folder made while the observer started (its subtree is reconciled)."""
        assert self._folder_watches is not None
        added, failed = self._folder_watches.resync()
        self._add(set(), folders=added, full=bool(failed))

    # -- events ------------------------------------------------------------------------------

    def _on_event(self, event: FileSystemEvent) -> None:
        """Collect memory paths, and the folders outside dot-folders that were created, moved or removed."""
        paths = event_paths(event)
        if event.is_directory:
            self._follow_folder(event)  # before the batch is taken: its reconcile then covers what the watch missed
            # both ends of a move: what left the source is removed, what arrived at the destination is read
            folders = {path for path in paths if outside_dot_folders(self.root, path)}
            self._add(set(), folders=folders - {self.root}, full=self.root in folders)
            return
        # both ends of a move: an atomic save renames a temp file (not a memory) over the note
        self._add({path for path in paths if is_memory_path(self.root, path)}, full=False)

    def _follow_folder(self, event: FileSystemEvent) -> None:
        """Watch a top-level folder that arrived, unwatch one that left. If its watch could not be added, the whole
        vault is reconciled now, and each periodic rescan tries the watch again."""
        assert self._folder_watches is not None
        try:
            failed = self._folder_watches.follow(event)
        except Exception:  # an error here would end watchdog's dispatch thread, and every later event with it
            logger.exception("updating the watches for %s failed", event.src_path)
            failed = {self.root}
        if failed:
            self._add(set(), full=True)

    def _on_overflow(self) -> None:
        """The kernel dropped events (its queue overflowed): only a walk of the whole vault finds what they named."""
        logger.warning("file events were lost (the kernel's event queue overflowed); reconciling the whole vault")
        self._add(set(), full=True)

    def _add(self, paths: set[Path], *, full: bool, folders: set[Path] | None = None) -> None:
        """Add to the pending batch and restart its quiet timer."""
        if not paths and not full and not folders:
            return
        with self._cond:
            now = time.monotonic()
            self._paths |= paths
            self._folders |= folders or set()
            self._full = self._full or full
            self._last_event = now
            if self._first_event is None:
                self._first_event = now
                # later events only push the deadline back, which the worker finds when it wakes
                self._cond.notify_all()

    def recheck(self, relative_paths: Iterable[str]) -> None:
        """Look at these vault paths again after the usual quiet time, as if they had changed."""
        self._add({self.root / p for p in relative_paths}, full=False)

    # -- delivery ----------------------------------------------------------------------------

    @property
    def batches_delivered(self) -> int:
        """How many batches `on_batch` has been called with (including calls that raised)."""
        with self._delivered:
            return self._batches_delivered

    def wait_for_batch(self, after: int, timeout: float) -> bool:
        """Block until more than `after` batches were delivered; False if `timeout` passed first."""
        with self._delivered:
            return self._delivered.wait_for(lambda: self._batches_delivered > after, timeout)

    def flush_now(self) -> bool:
        """Deliver the pending paths at once, in the caller's thread; False if nothing was pending."""
        with self._deliver_lock:
            batch = self._take_pending()
            if batch is None:
                return False
            self._deliver(batch)
            return True

    def _run(self) -> None:
        """Worker thread: wait until a batch or a rescan is due, then deliver it."""
        while True:
            due = self._wait_until_due()
            if due is None:
                return
            with self._deliver_lock:
                # flush_now may have taken the pending batch while we waited for the lock
                batch = self._take_pending() if due == "flush" else Batch(frozenset(), full=True)
                if batch is not None:
                    self._deliver(batch)

    def _wait_until_due(self) -> Literal["flush", "rescan"] | None:
        """Sleep on the condition until the pending batch or the rescan is due; None when stopping."""
        with self._cond:
            while not self._stopping:
                now = time.monotonic()
                flush_at = self._flush_deadline()
                if flush_at is not None and now >= flush_at:
                    return "flush"
                if self._next_rescan is not None and now >= self._next_rescan:
                    return "rescan"
                wake_at = min((t for t in (flush_at, self._next_rescan) if t is not None), default=None)
                self._cond.wait(None if wake_at is None else wake_at - now)
            return None

    def _flush_deadline(self) -> float | None:
        """When the pending batch is due: after `debounce` of quiet, at most `max_wait` after it began."""
        if self._first_event is None:
            return None
        return min(self._last_event + self._debounce, self._first_event + self._max_wait)

    def _take_pending(self) -> Batch | None:
        """Empty the pending batch and return it (None if there was nothing)."""
        with self._cond:
            if self._first_event is None:
                return None
            batch = Batch(frozenset(self._paths), full=self._full, folders=frozenset(self._folders))
            self._paths = set()
            self._folders = set()
            self._full = False
            self._first_event = None
            return batch

    def _deliver(self, batch: Batch) -> None:
        """Call on_batch (the caller holds `_deliver_lock`); its errors are logged, never raised."""
        if batch.full and self._folder_watches is not None:
            self._folder_watches.resync()  # the safety net for the watches too; this batch reconciles what they missed
        try:
            self._on_batch(batch)
        except Exception:
            # the next batch or the periodic rescan reconciles whatever this one missed
            logger.exception("on_batch failed for a batch of %d path(s) (full=%s)", len(batch.paths), batch.full)
        if batch.full:
            self._postpone_rescan()
        with self._delivered:
            self._batches_delivered += 1
            self._delivered.notify_all()

    def _postpone_rescan(self) -> None:
        """A full reconcile just ran, so the safety-net rescan can wait a whole interval again."""
        with self._cond:
            if self._rescan_interval is not None:
                self._next_rescan = time.monotonic() + self._rescan_interval


def _check_timings(debounce: float, max_wait: float, rescan_interval: float | None, polling_interval: float) -> None:
    """Refuse timings that would make the watcher spin or never flush."""
    if debounce < 0:
        raise ValueError(f"debounce must be >= 0, not {debounce}")
    if max_wait < debounce:
        raise ValueError(f"max_wait ({max_wait}) must be at least debounce ({debounce})")
    if rescan_interval is not None and rescan_interval <= 0:
        raise ValueError(f"rescan_interval must be > 0 or None, not {rescan_interval}")
    if polling_interval <= 0:
        raise ValueError(f"polling_interval must be > 0, not {polling_interval}")
