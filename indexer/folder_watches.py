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


class _UnwatchedMidEvent(logging.Filter):
    """watchdog logs an ERROR when a watch is dropped while its thread holds an event for it: a folder's watch dropped
    as the folder leaves, which the vault folder's own watch reports. Expected here, and not an error a user can act
    on; any other watchdog message still passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "called when the thread is inactive" not in record.getMessage()


logging.getLogger("watchdog.observers.inotify").addFilter(_UnwatchedMidEvent())


def top_level_folders(root: Path) -> set[str] | None:
    """The names of the folders directly in `root` that are neither dot-folders nor symlinks (watchdog's own
    recursive watch does not follow symlinks either); None when the folder could not be read for a reason other
    than its absence (out of file descriptors, say), which says nothing about which folders are there."""
    try:
        with os.scandir(root) as entries:
            return {e.name for e in entries if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)}
    except (FileNotFoundError, NotADirectoryError):  # the vault folder itself is gone: its own watch reports that
        return set()
    except OSError as error:
        logger.warning("could not list the folders of %s (%s); their watches are left as they are", root, error)
        return None


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
        if names is None:
            raise OSError(f"could not list the folders of {self._root}")  # the caller falls back, as for a watch
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
        # Each top-level name the event names gets the watch the disk calls for now; the event says which name to
        # look at, never what to do. Events of different watches reach us in no set order: a folder replaced under
        # its name (deleted and made again, or another renamed over it) has its old watch report its own deletion
        # after the vault folder's watch reported the new one, and acting on that late event dropped the new
        # folder's watch (review of session 11). A symlink is never watched (a polling observer reports one to a
        # folder as a folder).
        failed: set[Path] = set()
        for path in {Path(os.fsdecode(p)) for p in (event.src_path, event.dest_path) if p}:
            if path.parent != self._root or path.name.startswith("."):
                continue
            if path.is_dir() and not path.is_symlink():
                failed |= self._watch(path.name, replace=True) or set()
            else:
                self._unwatch(path.name)
        return failed or None

    def resync(self) -> tuple[set[Path], set[Path] | None]:
        """Watch the top-level folders that have no watch and drop the watches of folders gone, as the safety net
        for anything the events missed (a folder made while the watcher started, a watch the kernel refused).
        Returns the folders newly watched (their subtrees are to be reconciled) and those that could not be."""
        # Under the observer's lock, which watchdog's dispatch thread holds while it calls `follow`: a folder
        # replaced between the listing and the unwatch below had its new watch dropped with the old one's name.
        # (The lock is watchdog's own attribute; it is reentrant, and it is taken before ours, as in `follow`.)
        with self._observer._lock:
            on_disk = top_level_folders(self._root)
            if on_disk is None:
                return set(), None
            with self._lock:
                if self.whole_tree:
                    return set(), None
                watched = set(self._watches)
            for name in watched - on_disk:
                self._unwatch(name)
            added: set[Path] = set()
            failed: set[Path] = set()
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
        except (FileNotFoundError, NotADirectoryError):
            return None  # gone (or replaced) before its watch was added: its removal or return is in the events
        except OSError as error:
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
