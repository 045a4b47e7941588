"""Bounded waiting for what another process does (binds its port, lets go of a lock, exits): such a
process sends no event to wait on, so the caller tries, pauses, and tries again until a deadline.
Standard library only: the hooks' client imports it."""

from __future__ import annotations

import time
TYPE_CHECKING = False  # a constant, not typing's: importing typing costs every hook process a few ms
if TYPE_CHECKING:
    from threading import Event
    from typing import Callable, Iterator

FIRST_PAUSE = 0.05  # a process that is nearly there is seen at once...
LONGEST_PAUSE = 0.5  # ...and one that takes seconds (a model loading) is asked twice a second, not twenty times


def attempts(timeout: float, first: float = FIRST_PAUSE, longest: float = LONGEST_PAUSE,
             grow: float = 1.5, until: Event | None = None) -> Iterator[None]:
    """One step per try, with a pause between tries (`first`, times `grow` each time, at most `longest`),
    until `timeout` seconds have passed after a try: then the loop ends (its `else` reports the timeout).
    The first try is immediate and the last comes at the deadline: the pause before it is cut short there, so a
    caller's bound is the deadline and not the deadline plus one pause (a hook's 3 s budget held 3.1 s).
    `until`, once set, ends the loop at once, mid-pause (the caller looks at it to tell it from the timeout)."""
    deadline = time.monotonic() + timeout
    pause = first
    while True:
        yield
        left = deadline - time.monotonic()
        if left <= 0:
            return
        if until is None:
            time.sleep(min(pause, left))
        elif until.wait(min(pause, left)):
            return
        pause = min(pause * grow, longest)


def wait_until(condition: Callable[[], bool], timeout: float, pause: float = FIRST_PAUSE) -> bool:
    """True once `condition()` holds, False if it still does not after `timeout` seconds (tried every `pause`)."""
    for _ in attempts(timeout, pause, pause):
        if condition():
            return True
    return False
