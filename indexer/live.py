"""An index that follows the files: the watcher's batches become `Index.sync` calls."""

from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from .backfill import Backfill
from .backoff import Backoff
from .idle_fold import IDLE_SECONDS, IdleFold
from .index import Index, SyncReport
from .warm_ahead import WarmAhead
from .segment_merger import SegmentMerger
from .settings import WatchSettings
from .watcher import Batch, VaultWatcher

log = logging.getLogger("memdir.live")
COMPACT_SHARE = 0.2
# The fold at a close gives up past this (the log stays, replayed at the next open and folded after its reconcile):
# it rewrites the whole snapshot, ~3 s at 100k memories on a busy machine, and a SIGTERM or `memdir stop` should end the
# server promptly. A session's log was mostly folded while it was idle (IdleFold); what is left is the last minutes'.
CLOSE_FOLD_SECONDS = 1.0
# With the rescan off, a whole-vault pass that failed again (a disk that stays full) is retried by an edit's batch only
# after this wait, doubling: each retry reads every file (3-4 s at 20k), and every edit's batch would be one.
WHOLE_RETRY_FIRST_SECONDS = 5.0
WHOLE_RETRY_CAP_SECONDS = 300.0


class LiveIndex:
    """Owns a watcher over the vault and applies every batch to the index it wraps."""

    def __init__(self, index: Index, settings: WatchSettings | None = None, *, fold_idle: float = IDLE_SECONDS,
                 close_fold_seconds: float = CLOSE_FOLD_SECONDS) -> None:
        self.index = index
        self.close_fold_seconds = close_fold_seconds
        settings = settings or WatchSettings()
        self.syncs = 0
        self.last_report: SyncReport | None = None
        self._synced = threading.Condition()
        self._applying: set[threading.Thread] = set()  # batches being applied (_on_batch)
        self._reconciling: threading.Thread | None = None
        self.caught_up = threading.Event()  # the reconcile at the start, and the vectors' fold after it, are done
        self._stopping = threading.Event()
        # A failed whole-vault sync leaves the files it did not write to the next one (Index._left_unwritten): the
        # rescan's, or with the rescan off (rescan_seconds = 0), the watcher's next batch, made whole. Without it they
        # waited for the next open, an edit the failed pass never reached unfound meanwhile (review of session 10).
        self._rescans = bool(settings.rescan_seconds)
        self._retry_lock = threading.Lock()  # batches are applied side by side: a retry is taken by one of them
        self._whole_due = False
        # Whole passes failed so far: a whole pass that succeeds clears the retry only if none failed after it began.
        # One that began before another failed read the vault before that one's edits, and can end after it.
        self._whole_failures = 0
        self._reconcile_failed = False  # the open's reconcile ended in an error: the next whole pass is a reconcile
        self.whole_retry = Backoff(WHOLE_RETRY_FIRST_SECONDS, WHOLE_RETRY_CAP_SECONDS)
        self.backfill = Backfill(index) if index.defer_embedding else None
        self.merger = SegmentMerger(index)
        self.idle_fold = IdleFold(index, fold_idle)
        self.ahead = WarmAhead(index)
        self.watcher = VaultWatcher(
            index.root,
            self._on_batch,
            debounce=settings.debounce_seconds,
            max_wait=settings.max_wait_seconds,
            rescan_interval=settings.rescan_seconds or None,
            polling=settings.polling,
        )

    def start(self) -> "LiveIndex":
        self.watcher.start()
        if not self.index.reconcile_pending:
            report = self.index.sync()  # edits made between the index's own reconcile and the watcher's start
            self.watcher.recheck(report.held)
            self.caught_up.set()
        else:  # opened with reconcile=False: searches are answered meanwhile, from the committed generation
            self._reconciling = threading.Thread(target=self._reconcile, name=f"reconcile {self.index.root.name}",
                                                 daemon=True)
            self._reconciling.start()
        if self.backfill is not None:
            self.backfill.start()
        self.merger.start()
        self.idle_fold.start()
        self.ahead.start()
        return self

    def _reconcile(self) -> None:
        """The deep reconcile Index.open left out, once the watcher is up: what changed before it started is found
        here, what changes after is in its batches. It starts at once, not after the first answer: until it has run,
        answers, the spool's replay and the lifecycle read the committed generation, which knows nothing of the
        files edited, made private or deleted while no server ran (review of session 8)."""
        try:
            if self._stopping.is_set():
                return  # the next owner's open reconciles
            try:
                report = self.index.reconcile()
            except Exception:  # the rescan, or the next batch, reconciles again (_sync); the server answers meanwhile
                log.exception("reconciling %s at open failed", self.index.root)
                with self._retry_lock:
                    self._reconcile_failed = True
                    self._whole_due = not self._rescans  # the next batch retries it at once; a failed retry waits
                    self._whole_failures += 1
                return
            self.watcher.recheck(report.held)
            self._settle_vectors(self._stopping.is_set)  # a log a killed owner left: the next open need not replay it
        finally:
            self.caught_up.set()

    def _settle_vectors(self, cancelled: Callable[[], bool] = lambda: False) -> None:
        try:
            self.index.settle_vectors(cancelled)
        except Exception:  # a full disk: the log stays and is replayed at the next open, as before
            log.exception("folding the vectors' log of %s into their snapshot failed", self.index.root)

    def stop(self) -> None:
        self._stopping.set()
        self.ahead.stop()
        if self._reconciling is not None:
            self._reconciling.join()  # holds the index lock in turns: the index must not close under it
        self.watcher.flush_now()
        self.watcher.stop()
        with self._synced:
            self._synced.wait_for(lambda: not self._applying)  # a batch's keyword commit ends before the index closes
        if self.backfill is not None:
            self.backfill.stop()
        self.merger.stop()
        self.idle_fold.stop()
        # The idle exit, or any close: the next open answers without replaying this session's log, unless the fold
        # would keep a SIGTERM waiting (then the log stays, and the next owner folds it after its reconcile).
        deadline = time.monotonic() + self.close_fold_seconds
        self._settle_vectors(lambda: time.monotonic() >= deadline)

    def __enter__(self) -> "LiveIndex":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _on_batch(self, batch: Batch) -> None:
        """Apply a batch in a thread of its own, and hand the watcher its next batch as soon as this one's sync ends
        or lets go of the index lock to commit a big keyword write: a pull the watcher cut in two is then read
        and keyword-searchable while the first part commits, not after (Whoosh commits 1,000 memories in
        seconds at 100k; bench/results/reindex-and-pull.md, issue 32 item 4). The syncs keep their order
        (Index._write_keywords)."""
        handed_on = threading.Event()
        thread = threading.Thread(target=self._apply, args=(batch, handed_on), name="memdir-sync", daemon=True)
        with self._synced:
            self._applying.add(thread)
        thread.start()
        handed_on.wait()

    def _apply(self, batch: Batch, handed_on: threading.Event) -> None:
        try:
            self._sync(batch, handed_on.set)
        except Exception:  # the next batch or the periodic rescan reconciles whatever this one missed
            log.exception("applying a batch of %d path(s) (full=%s) failed", len(batch.paths), batch.full)
        finally:
            handed_on.set()
            with self._synced:
                self._applying.discard(threading.current_thread())
                self._synced.notify_all()

    def _whole_failed(self) -> None:
        with self._retry_lock:
            self.whole_retry.failed()
            self._whole_due = not self._rescans
            self._whole_failures += 1

    def _take_whole_retry(self) -> tuple[bool, bool, int]:
        """(whether this batch retries a failed whole pass, whether as the open's reconcile, the whole passes failed
        before it began), read and reset in one step. Not while stopping: the next owner's open reconciles the whole
        vault anyway."""
        with self._retry_lock:
            if self._stopping.is_set():
                return False, False, self._whole_failures
            whole = self._whole_due and self.whole_retry.due()
            self._whole_due = self._whole_due and not whole
            return whole, self._reconcile_failed, self._whole_failures

    def _sync(self, batch: Batch, keyword_commit_began: Callable[[], None]) -> None:
        retry, reconcile_failed, failed_before = self._take_whole_retry()
        whole = batch.full or retry
        try:
            if whole and reconcile_failed:
                # The open's reconcile ended and failed (not one still running): this is its retry, heal and facts
                # included, and the lifecycle waits for it (Curator.gc). The next batch waits for it (one retry at a
                # time), as behind a big sync.
                report = self.index.reconcile()
                with self._retry_lock:
                    self._reconcile_failed = False
            else:
                report = self.index.sync(None if whole else batch.paths, folders=batch.folders,
                                         keyword_commit_began=keyword_commit_began)
        except Exception:
            if whole:
                self._whole_failed()
            raise
        self.idle_fold.log_grew()
        if whole:
            with self._retry_lock:  # a whole pass that came while a retry waited its turn did the retry's work...
                if self._whole_failures == failed_before:  # ...unless one failed after it began
                    self.whole_retry.succeeded()
                    self._whole_due = False
        self.watcher.recheck(report.held)  # files caught mid-save: look again once the save is done
        # Deleted keyword documents skew BM25 until purged: purge on the periodic rescan, or
        # sooner when they pile up, so results converge on what a fresh rebuild would give.
        share = self.index.keyword_deleted_share()
        if share > COMPACT_SHARE or (batch.full and share > 0):
            self.index.compact()
        if report.changed or report.errors:
            log.info("indexed: +%d ~%d -%d, %d errors, %d embedded in %.0f ms", report.added, report.updated,
                     report.removed, report.errors, report.embedded, report.seconds * 1000)
        with self._synced:
            self.syncs += 1
            self.last_report = report
            self._synced.notify_all()

    def wait_for_sync(self, after: int, timeout: float) -> bool:
        """Block until more than `after` batches were applied (bounded); for tests and benchmarks."""
        with self._synced:
            return self._synced.wait_for(lambda: self.syncs > after, timeout=timeout)
