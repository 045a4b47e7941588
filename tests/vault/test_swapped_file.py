"""A memory file swapped for something that is not a regular file between its stat and its read (a local process
racing the watcher): read as gone, never waited on or read without end."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from tests.conftest import memory_text, write
from vault import atomic


def test_a_memory_file_swapped_for_a_fifo_after_its_stat_is_read_as_gone_and_not_waited_on(tmp_path: Path):
    # The index stats a path, then reads it: a FIFO renamed over it in between blocked the open, and with it the
    # watcher's thread, for good (nothing ever writes to it).
    path = write(tmp_path, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha"))
    assert atomic.read_bytes(path) == path.read_bytes()
    os.mkfifo(tmp_path / "fifo")
    os.replace(tmp_path / "fifo", path)
    read: list[bytes | None] = []
    reader = threading.Thread(target=lambda: read.append(atomic.read_bytes(path)), daemon=True)
    reader.start()
    reader.join(10)
    try:
        assert not reader.is_alive() and read == [None]
    finally:
        with contextlib.suppress(OSError):  # a reader still blocked in its open is let go
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_a_device_in_its_place_is_read_as_gone(tmp_path: Path):
    os.symlink("/dev/null", tmp_path / "null.md")  # /dev/zero was read without end; /dev/null ends, for older trees
    assert atomic.read_bytes(tmp_path / "null.md") is None
