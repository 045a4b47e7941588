"""An index that follows the files: the watcher's batches become `Index.sync` calls."""

from __future__ import annotations

import logging
import threading

from .backfill import Backfill
from .index import Index, SyncReport
from .segment_merger import SegmentMerger
from .settings import WatchSettings
from .watcher import Batch, VaultWatcher

log = logging.getLogger("memdir.live")
COMPACT_SHARE = 0.2


class LiveIndex:
    """Owns a watcher over the vault and applies every batch to the index it wraps."""

    def __init__(self, index: Index, settings: WatchSettings | None = None) -> None:
        self.index = index
        settings = settings or WatchSettings()
        self.syncs = 0
        self.last_report: SyncReport | None = None
        self._synced = threading.Condition()
        self._reconciling: threading.Thread | None = None
        self.backfill = Backfill(index) if index.defer_embedding else None
        self.merger = SegmentMerger(index)
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
        else:  # opened with reconcile=False: searches are answered meanwhile, from the committed generation
            self._reconciling = threading.Thread(target=self._reconcile, name=f"reconcile {self.index.root.name}",
                                                 daemon=True)
            self._reconciling.start()
        if self.backfill is not None:
            self.backfill.start()
        self.merger.start()
        return self

    def _reconcile(self) -> None:
        """The deep reconcile Index.open left out, once the watcher is up: what changed before it started is found
        here, what changes after is in its batches."""
        try:
            report = self.index.reconcile()
        except Exception:  # the next batch or rescan reconciles again; the server goes on answering meanwhile
            log.exception("reconciling %s at open failed", self.index.root)
            return
        self.watcher.recheck(report.held)

    def stop(self) -> None:
        if self._reconciling is not None:
            self._reconciling.join()  # holds the index lock in turns: the index must not close under it
        self.watcher.flush_now()
        self.watcher.stop()
        if self.backfill is not None:
            self.backfill.stop()
        self.merger.stop()

    def __enter__(self) -> "LiveIndex":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _on_batch(self, batch: Batch) -> None:
        report = self.index.sync(None if batch.full else batch.paths, folders=batch.folders)
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
