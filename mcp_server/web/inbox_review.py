"""`memdir review`'s items for the inbox page, computed in a background thread so no page waits for them
longer than its budget: at 10k memories a review costs a second or two in a new process and about a
third of a second after a change (mostly the lifecycle's dry run and the vault-wide pair passes).

The items are exactly `MemoryService.review()`'s, for the vaults as they are now: an index change or a
dismissal (the key) makes the page wait for a fresh review, and while that runs it says "still checking"
instead of showing an older list. Only the code files memories cite can change without changing the key;
for those a list older than REVIEW_SECONDS is refreshed in the background and shown meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from ..views.results import ReviewItem

log = logging.getLogger("memdir.web")
REVIEW_SECONDS = 30.0  # how long a list is trusted while no index or dismissal changed (cited code files may have)
PAGE_WAIT = 0.2  # what a page waits for a review in progress before it says "still checking" (budget 300 ms; 0.25 s measured 312 ms under load)


class Pending(Exception):
    """The review for the vaults as they are now is still running."""


class BackgroundReview:
    """One review at a time per service, rerun until it saw the vaults unchanged from start to end."""

    def __init__(self, service: Any) -> None:
        self._service = weakref.ref(service)  # weak: _REVIEWS holds this by the service, and a closed vault's service must go
        self._changed = threading.Condition()
        self._key: tuple[Any, ...] | None = None
        self._finished = 0.0
        self._items: list[ReviewItem] | None = None
        self._error: BaseException | None = None
        self._running = False

    @property
    def service(self) -> Any:
        service = self._service()
        if service is None:
            raise ReferenceError("the vault this inbox reviewed was closed")
        return service

    def key(self) -> tuple[Any, ...]:
        """What the review's answer depends on besides cited code files: each vault's index version and dismissals."""
        from indexer.review import DISMISSED_FILE

        return tuple((str(side.root), side.index.version, mtime_ns(side.root / DISMISSED_FILE))
                     for side in self.service.app.sides(include_user=True))

    def items(self, wait: float = PAGE_WAIT) -> list[ReviewItem]:
        """The current review's items; raises Pending when it is not done within `wait` seconds."""
        key = self.key()
        deadline = time.monotonic() + wait
        with self._changed:
            while True:
                if self._key == key and self._error is not None:
                    error, self._error, self._key = self._error, None, None  # reported once; the next page tries again
                    raise error
                if self._key == key and self._items is not None:
                    if time.monotonic() - self._finished >= REVIEW_SECONDS:
                        self._start()  # for cited code files; this list is shown meanwhile
                    return self._items
                self._start()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Pending()
                self._changed.wait(left)

    def _start(self) -> None:  # with self._changed held
        if not self._running:
            self._running = True
            threading.Thread(target=self._run, name="memdir-inbox-review", daemon=True).start()

    def _run(self) -> None:
        while True:
            try:
                before = self.key()
            except Exception:  # the vault was closed (or its service dropped): the page that asks reports it
                with self._changed:
                    self._running = False
                    self._changed.notify_all()
                return
            items: list[ReviewItem] | None = None
            error: BaseException | None = None
            try:
                items = self.service.review().items
            except Exception as exc:  # the page that waits for it reports it (a closed vault, a damaged index...)
                error = exc
            try:
                after = self.key()
            except Exception as exc:  # ReferenceError included: nobody waits for a closed vault's review
                after, error = before, error or exc
            with self._changed:
                if after == before:
                    self._key, self._finished, self._items, self._error = before, time.monotonic(), items, error
                    self._running = False
                    self._changed.notify_all()
                    return
            log.debug("the vault changed during an inbox review; reviewing again")


_REVIEWS: weakref.WeakKeyDictionary[Any, BackgroundReview] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def for_service(service: Any) -> BackgroundReview:
    with _GUARD:
        review = _REVIEWS.get(service)
        if review is None:
            review = _REVIEWS[service] = BackgroundReview(service)
        return review


def forget() -> None:
    """Every kept review dropped (what the first page after a server start pays; for bench/ui.py)."""
    with _GUARD:
        _REVIEWS.clear()


def mtime_ns(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0
