"""Which watches cover a vault: the vault folder alone, and each top-level folder that is not a dot-folder.

One recursive watch on the vault folder also watches `.memdir/`, `.git/` and every other dot-folder, and watchdog
reads, builds and dispatches an event for every write there before the watcher can drop it: with nine assistant
sessions on one served vault that was ~7,000 events of memdir's own index writes for ~90 from the notes
(bench/results/s11-watch11.md). So the vault folder is watched without its subfolders (its own files, and its
folders coming and going) and each top-level folder whose name does not start with "." is watched with all of its
own. A top-level folder created, moved in, renamed or removed gets or loses its watch from the event handler,
before the batch that names it is delivered, so the reconcile of its subtree covers the files that landed in it
before its watch existed.

Each watch costs watchdog a thread, so past `MAX_FOLDER_WATCHES` top-level folders the vault goes back to one
recursive watch on the whole tree, for as long as the watcher runs.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path

from watchdog.events import DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import BaseObserver, ObservedWatch

logger = logging.getLogger("memdir.watcher")

MAX_FOLDER_WATCHES = 64


def top_level_folders(root: Path) -> set[str]:
    """The names of the folders directly in `root` that are neither dot-folders nor symlinks (watchdog's own
    recursive watch does not follow symlinks either)."""
    try:
        with os.scandir(root) as entries:
            return {e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)}
    except OSError:  # the vault folder itself is gone: its own watch reports that
        return set()


class FolderWatches:
    """The observer's watches over one vault, kept in step with its top-level folders.

    Called from watchdog's dispatch thread (events), and from the thread that starts the watcher or delivers a full
    reconcile (`resync`). No lock of ours is held while calling the observer: the dispatch thread calls us holding
    the observer's lock, so holding ours while waiting for it would deadlock. Every step is therefore idempotent:
    a folder watched twice is one watch, one unwatched twice is no error."""

    def __init__(self, observer: BaseObserver, root: Path, handler: FileSystemEventHandler,
                 event_filter: list[type[FileSystemEvent]]) -> None:
        self._observer = observer
        self._root = root
        self._handler = handler
        self._filter = event_filter
        self._max = MAX_FOLDER_WATCHES  # read here, so that a test can lower it
        self._lock = threading.Lock()  # guards `_watches` and `whole_tree`
        self._watches: dict[str, ObservedWatch] = {}
        self._root_watch: ObservedWatch | None = None  # the vault folder without its subfolders
        self.whole_tree = False

    def schedule(self) -> None:
        """The first watches, before the observer starts (a failure here is the caller's, e.g. to fall back to
        polling)."""
        names = top_level_folders(self._root)
        if len(names) > self._max:
            self._watch_whole_tree(len(names))
            return
        self._root_watch = self._observer.schedule(self._handler, str(self._root), recursive=False,
                                                   event_filter=self._filter)
        for name in names:
            self._watches[name] = self._schedule(name)

    @property
    def folders(self) -> set[str]:
        """The top-level folders watched on their own (none once the whole tree is watched)."""
        with self._lock:
            return set(self._watches)

    def follow(self, event: FileSystemEvent) -> set[Path] | None:
        """Add or drop the watch a top-level folder event calls for. Returns the folders whose watch could not be
        added (their changes go unseen until the next resync), or None if all is well."""
        if not isinstance(event, (DirCreatedEvent, DirDeletedEvent, DirMovedEvent)):
            return None
        source = Path(os.fsdecode(event.src_path)) if event.src_path else None
        if source is not None and source.parent == self._root and not isinstance(event, DirCreatedEvent):
            self._unwatch(source.name)
        arrived = Path(os.fsdecode(event.dest_path)) if isinstance(event, DirMovedEvent) else \
            source if isinstance(event, DirCreatedEvent) else None
        if arrived is not None and arrived.parent == self._root and not arrived.name.startswith("."):
            return self._watch(arrived.name, replace=True)
        return None

    def resync(self) -> tuple[set[Path], set[Path] | None]:
        """Watch the top-level folders that have no watch and drop the watches of folders gone, as the safety net
        for anything the events missed (a folder made while the watcher started, a watch the kernel refused).
        Returns the folders newly watched (their subtrees are to be reconciled) and those that could not be."""
        on_disk = top_level_folders(self._root)
        with self._lock:
            if self.whole_tree:
                return set(), None
            watched = set(self._watches)
        for name in watched - on_disk:
            self._unwatch(name)
        added, failed = set(), set()
        for name in on_disk - watched:
            refused = self._watch(name, replace=False)
            (failed if refused else added).add(self._root / name)
        return added, failed or None

    def _watch(self, name: str, *, replace: bool) -> set[Path] | None:
        """Watch `root/name` and all below it; with `replace`, drop a watch of that name first (a folder created
        again under an old name is a new inode, which the old watch does not see)."""
        with self._lock:
            if self.whole_tree or (name in self._watches and not replace):
                return None
            too_many = name not in self._watches and len(self._watches) >= self._max
        if too_many:
            return self._switch_to_whole_tree()
        if replace:
            self._unwatch(name)
        try:
            watch = self._schedule(name)
        except OSError as error:
            if not (self._root / name).is_dir():
                return None  # gone again before its watch was added: its removal is in the events
            # ENOSPC (fs.inotify.max_user_watches): the rest of the vault is still watched
            logger.warning("could not watch %s (%s); its changes are found by the next full reconcile",
                           self._root / name, error)
            return {self._root / name}
        with self._lock:
            self._watches[name] = watch
        return None

    def _unwatch(self, name: str) -> None:
        with self._lock:
            watch = self._watches.pop(name, None)
        if watch is not None:
            with contextlib.suppress(KeyError):  # unscheduled already, by another thread's step
                self._observer.unschedule(watch)

    def _schedule(self, name: str) -> ObservedWatch:
        return self._observer.schedule(self._handler, str(self._root / name), recursive=True,
                                       event_filter=self._filter)

    def _switch_to_whole_tree(self) -> set[Path] | None:
        """Too many top-level folders for a watch each: one recursive watch on the vault folder from now on. The
        old watches are dropped only once it is up, so no event falls between the two."""
        with self._lock:
            if self.whole_tree:
                return None
            count = len(self._watches) + 1
        try:
            self._watch_whole_tree(count)
        except OSError as error:
            logger.warning("could not watch %s as one tree (%s); its new folders are found by the next full "
                           "reconcile", self._root, error)
            return {self._root}
        with self._lock:
            dropped, self._watches = list(self._watches.values()), {}
        for watch in [*dropped, self._root_watch]:
            with contextlib.suppress(KeyError):
                if watch is not None:
                    self._observer.unschedule(watch)
        self._root_watch = None
        return None

    def _watch_whole_tree(self, count: int) -> None:
        self._observer.schedule(self._handler, str(self._root), recursive=True, event_filter=self._filter)
        with self._lock:
            self.whole_tree = True
        logger.info("watching %s as one tree: %d top-level folders, more than the %d watched one by one",
                    self._root, count, self._max)
