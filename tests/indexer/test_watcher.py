"""The vault watcher turns real file-system activity into debounced batches of memory paths.

Nothing here sleeps: tests wait on the watcher's delivery counter with bounded timeouts, and prove
that no spurious batch arrived by writing a "fence" note afterwards and checking that the next
batch holds the fence alone.
"""

from __future__ import annotations

import errno
import inspect
import itertools
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
from watchdog.observers import inotify_c

from indexer import folder_watches
from indexer import watcher as watcher_module
from indexer.watcher import Batch, VaultWatcher, event_paths, outside_dot_folders

# When a folder is moved inside the tree, or `mkdir -p` races watchdog's recursive walk, watchdog
# 7.1.0 re-adds an inotify watch it already holds and warns "Callback with id ... already exists"
# on its reader thread (see gorakhargosh/watchdog PR #1278). Harmless, but the suite's "error"
# filter would turn it into an exception that kills the reader thread and leaves the watcher deaf.
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")

TIMEOUT = 10.0  # generous bound for a loaded 2-core CI machine; a healthy run waits ~0.3 s per batch
GIT = ["git", "-c", "user.name=memdir", "-c", "user.email=memdir@example.com", "-c", "commit.gpgsign=false"]


class Recorder:
    """An on_batch that behaves like the indexer: it reads every path it is given from the disk."""

    def __init__(self, fail_first: int = 0) -> None:
        self.batches: list[Batch] = []
        self.present: list[dict[Path, bool]] = []
        self._fail_first = fail_first

    def __call__(self, batch: Batch) -> None:
        self.batches.append(batch)
        self.present.append({path: _read(path) is not None for path in batch.paths})
        if len(self.batches) <= self._fail_first:
            raise RuntimeError("index is on fire")

    @property
    def paths(self) -> set[Path]:
        return set().union(*(batch.paths for batch in self.batches))


def _read(path: Path) -> bytes | None:
    # reading matters: it proves our own reads never come back as events
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


Start = Callable[..., tuple[VaultWatcher, Recorder]]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    folder.mkdir()
    return folder


@pytest.fixture
def start(root: Path) -> Iterator[Start]:
    """Start a watcher on the vault with a Recorder; every watcher is stopped at the end."""
    started: list[VaultWatcher] = []

    def _start(recorder: Recorder | None = None, **options: object) -> tuple[VaultWatcher, Recorder]:
        recorder = recorder or Recorder()
        options.setdefault("rescan_interval", None)
        watcher = VaultWatcher(root, recorder, **options)  # type: ignore[arg-type]
        started.append(watcher)
        watcher.start()
        return watcher, recorder

    yield _start
    for watcher in started:
        watcher.stop()


def wait_until(watcher: VaultWatcher, recorder: Recorder, done: Callable[[list[Batch]], bool]) -> list[Batch]:
    """Wait (bounded) until the delivered batches satisfy `done`; returns them."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        seen = watcher.batches_delivered
        if done(recorder.batches[:seen]):
            return recorder.batches[:seen]
        remaining = deadline - time.monotonic()
        assert remaining > 0 and watcher.wait_for_batch(seen, remaining), f"no batch; got {recorder.batches}"


_fences = itertools.count()


def fence(watcher: VaultWatcher, recorder: Recorder) -> list[Batch]:
    """Write a fresh note, wait for its batch, and return every batch delivered before it."""
    note = write(watcher.root / f"zz-fence-{next(_fences)}.md", "fence\n")
    batches = wait_until(watcher, recorder, lambda got: any(note in batch.paths for batch in got))
    assert batches[-1] == Batch(frozenset({note})), "something spurious was pending when the fence was written"
    return batches[:-1]


def settle(watcher: VaultWatcher, recorder: Recorder, path: Path) -> list[Batch]:
    """Wait for a batch naming `path`, then fence: every batch delivered up to then."""
    wait_until(watcher, recorder, lambda got: any(path in batch.paths for batch in got))
    return fence(watcher, recorder)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def git(root: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True, timeout=60)


# -- save styles -------------------------------------------------------------------------------


@pytest.mark.parametrize("temp_name", [".memdir-tmp-3f2a91", ".goutputstream-K2X4Q1", "note.md.tmp-8c1"])
def test_an_atomic_save_gives_one_batch_with_the_note_and_not_the_temp_file(root: Path, start: Start, temp_name: str):
    note = write(root / "note.md", "old\n")
    watcher, recorder = start()
    temp = write(root / temp_name, "new\n")
    os.replace(temp, note)
    assert settle(watcher, recorder, note) == [Batch(frozenset({note}))]
    assert recorder.present[0] == {note: True}


def test_vims_backup_rename_dance_gives_one_batch_with_the_note_present(root: Path, start: Start):
    note = write(root / "note.md", "old\n")
    watcher, recorder = start()
    os.rename(note, root / "note.md~")  # looks like a delete of the note
    write(root / ".note.md.swp", "swap")
    write(note, "new\n")
    write(root / "4913", "")  # vim's probe for a writable folder
    os.remove(root / "4913")
    os.remove(root / "note.md~")
    os.remove(root / ".note.md.swp")
    assert settle(watcher, recorder, note) == [Batch(frozenset({note}))]
    assert recorder.present[0] == {note: True}


def test_an_in_place_write_gives_a_batch_with_the_note(root: Path, start: Start):
    note = write(root / "notes" / "note.md", "old\n")
    watcher, recorder = start()
    with open(note, "w") as handle:
        handle.write("rewritten in place\n")
    assert settle(watcher, recorder, note) == [Batch(frozenset({note}))]
    assert recorder.present[0] == {note: True}


def test_a_delete_gives_a_batch_with_the_note_missing_on_disk(root: Path, start: Start):
    note = write(root / "notes" / "note.md", "doomed\n")
    watcher, recorder = start()
    note.unlink()
    assert settle(watcher, recorder, note) == [Batch(frozenset({note}))]
    assert recorder.present[0] == {note: False}


def test_reading_notes_in_the_callback_does_not_schedule_another_batch(root: Path, start: Start):
    note = write(root / "note.md", "read me\n")
    watcher, recorder = start()
    note.write_text("read me again\n")
    # the Recorder read the note; had that read come back as an event, a batch would precede the fence
    assert settle(watcher, recorder, note) == [Batch(frozenset({note}))]


# -- what is ignored -----------------------------------------------------------------------------


def test_dot_folders_dot_files_and_non_markdown_files_give_no_batch(root: Path, start: Start):
    watcher, recorder = start()
    write(root / ".memdir" / "index" / "manifest.json", "{}")
    write(root / ".memdir" / "cache.md", "derived")
    write(root / ".git" / "objects" / "ab" / "cdef01", "blob")
    write(root / ".git" / "notes.md", "not a memory")
    write(root / ".obsidian" / "workspace.json", "{}")
    write(root / ".obsidian" / "plugins" / "x" / "README.md", "plugin")
    shutil.rmtree(root / ".obsidian" / "plugins")
    write(root / ".trash" / "old.md", "trashed")
    write(root / ".hidden.md", "a dot-file")
    write(root / "todo.txt", "plain text")
    write(root / "picture.png", "png")
    write(root / "note.md~", "backup")
    assert fence(watcher, recorder) == []


def test_a_real_git_checkout_of_200_changed_notes_arrives_in_at_most_three_batches(root: Path, start: Start):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    notes = [root / "notes" / f"n{i:03}.md" for i in range(200)]
    git(root, "init", "-q", "-b", "main")
    for i, note in enumerate(notes):
        write(note, f"note {i} on main\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "checkout", "-qb", "other")
    for i, note in enumerate(notes):
        note.write_text(f"note {i} rewritten on other\n")
    git(root, "commit", "-qam", "other")
    git(root, "checkout", "-q", "main")
    watcher, recorder = start()

    git(root, "checkout", "-q", "other")
    wait_until(watcher, recorder, lambda got: set(notes) <= set().union(*(b.paths for b in got)))
    batches = fence(watcher, recorder)

    assert set(notes) <= set().union(*(batch.paths for batch in batches))
    assert len(batches) <= 3  # typically 1: the burst is over well within one debounce window
    assert not any(".git" in path.relative_to(root).parts for path in recorder.paths)
    assert all(recorder.present[0].values())


# -- folder changes and the safety net -------------------------------------------------------------


def _move_folder(root: Path) -> None:
    os.rename(root / "notes", root / "archive")


def _remove_folder(root: Path) -> None:
    shutil.rmtree(root / "notes")


def _trash_folder(root: Path) -> None:
    (root / ".trash").mkdir()
    os.rename(root / "notes", root / ".trash" / "notes")


def _bring_in_folder(root: Path) -> None:
    outside = root.parent / "outside"
    write(outside / "imported.md", "from elsewhere\n")
    os.rename(outside, root / "imported")


@pytest.mark.parametrize("change, named", [
    (_move_folder, {"notes", "archive"}),
    (_remove_folder, {"notes"}),
    (_trash_folder, {"notes"}),  # the other end is in a dot-folder: never memories
    (_bring_in_folder, {"imported"}),
])
def test_a_folder_moved_removed_or_brought_in_is_named_for_its_subtree_to_be_reconciled_not_the_vault(
    root: Path, start: Start, change: Callable[[Path], None], named: set[str]
):
    for name in ("a", "b", "c"):
        write(root / "notes" / f"{name}.md", name)
    watcher, recorder = start()
    change(root)
    wanted = {root / name for name in named}
    batches = wait_until(watcher, recorder, lambda got: wanted <= set().union(*(batch.folders for batch in got)))
    assert not any(batch.full for batch in batches)
    assert all(outside_dot_folders(root, folder) for batch in batches for folder in batch.folders)


def test_the_vault_folder_itself_removed_asks_for_a_full_reconcile(root: Path, start: Start):
    watcher, recorder = start()
    shutil.rmtree(root)
    batches = wait_until(watcher, recorder, lambda got: any(batch.full for batch in got))
    assert root not in set().union(*(batch.folders for batch in batches))


def test_an_overflowed_kernel_event_queue_asks_for_a_full_reconcile(start: Start):
    watcher, recorder = start()
    # what watchdog does on IN_Q_OVERFLOW: it rebuilds its watches and logs this, telling no handler
    logging.getLogger(watcher_module.OVERFLOW_LOGGER).warning("Inotify queue overflowed; filesystem events were lost")
    batches = wait_until(watcher, recorder, lambda got: any(batch.full for batch in got))
    assert batches[-1] == Batch(frozenset(), full=True)


def test_watchdog_still_reports_an_overflow_with_the_words_the_watcher_listens_for():
    source = inspect.getsource(inotify_c.InotifyFD.handle_event)
    assert f'logger.warning("{watcher_module.OVERFLOW_MESSAGE}' in source
    assert inotify_c.logger.name == watcher_module.OVERFLOW_LOGGER


def test_a_periodic_rescan_asks_for_a_full_reconcile_without_any_change(start: Start):
    watcher, recorder = start(rescan_interval=0.2)
    batches = wait_until(watcher, recorder, lambda got: len(got) >= 2)
    assert batches[:2] == [Batch(frozenset(), full=True)] * 2


def test_a_steady_stream_of_events_is_flushed_by_max_wait(root: Path, start: Start):
    note = write(root / "busy.md", "0\n")
    watcher, recorder = start(debounce=0.2, max_wait=0.6)
    flushed = threading.Event()
    started_at = time.monotonic()

    def keep_writing() -> None:
        # an edit every 20 ms: the 200 ms quiet window never comes, so only max_wait can flush
        for count in itertools.count():
            if flushed.wait(0.02) or time.monotonic() - started_at > TIMEOUT:
                return
            note.write_text(f"{count}\n")

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        assert watcher.wait_for_batch(0, TIMEOUT)
        elapsed = time.monotonic() - started_at
    finally:
        flushed.set()
        writer.join()
    assert recorder.batches[0] == Batch(frozenset({note}))
    assert elapsed < 0.6 + 1.5  # max_wait plus scheduling slack, far below the writer's 10 s


# -- which folders are watched ------------------------------------------------------------------------


@pytest.fixture
def handled(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path of every event watchdog hands to a watcher from now on, ignored ones included."""
    seen: list[Path] = []
    real = watcher_module._Handler.on_any_event

    def counted(self: watcher_module._Handler, event) -> None:  # type: ignore[no-untyped-def]
        seen.extend(event_paths(event))
        real(self, event)

    monkeypatch.setattr(watcher_module._Handler, "on_any_event", counted)
    return seen


def test_writes_under_memdir_reach_no_event_handler(root: Path, start: Start, handled: list[Path]):
    (root / ".memdir").mkdir()
    (root / ".git").mkdir()
    write(root / "notes" / "a.md", "a\n")
    watcher, recorder = start()
    for generation in range(20):  # what a served vault's index writes after every capture
        write(root / ".memdir" / "index" / f"g{generation}" / "segment.bin", "x" * 100)
        os.replace(write(root / ".memdir" / "index" / "manifest.tmp", "{}"), root / ".memdir" / "index" / "manifest.json")
    write(root / ".git" / "objects" / "ab" / "cd", "blob")
    assert fence(watcher, recorder) == []
    assert [p for p in handled if not outside_dot_folders(root, p)] == []


def test_a_vault_holding_only_files_is_watched(root: Path, start: Start):
    note = write(root / "note.md", "old\n")
    watcher, recorder = start()
    assert watcher.watched_folders == set()
    note.write_text("new\n")
    assert settle(watcher, recorder, note) == [Batch(frozenset({note}))]


@pytest.mark.parametrize("polling", [False, True])
def test_a_note_saved_in_a_top_level_folder_made_after_start_gives_a_batch(root: Path, start: Start, polling: bool):
    watcher, recorder = start(polling=polling, polling_interval=0.1)
    first = write(root / "later" / "first.md", "written before the folder's watch could exist\n")
    wait_until(watcher, recorder, lambda got: any(root / "later" in b.folders or first in b.paths for b in got))
    assert watcher.watched_folders == {"later"}
    note = write(root / "later" / "deep" / "note.md", "after\n")
    wait_until(watcher, recorder, lambda got: any(note in b.paths for b in got))


@pytest.mark.parametrize("polling", [False, True])
def test_a_renamed_top_level_folder_is_watched_under_its_new_name_only(root: Path, start: Start, polling: bool):
    note = write(root / "notes" / "a.md", "a\n")
    watcher, recorder = start(polling=polling, polling_interval=0.1)
    os.rename(root / "notes", root / "archive")
    wait_until(watcher, recorder, lambda got: {root / "notes", root / "archive"} <= set().union(*(b.folders for b in got)))
    assert watcher.watched_folders == {"archive"}
    moved = root / "archive" / "a.md"
    moved.write_text("edited after the rename\n")
    batches = settle(watcher, recorder, moved)
    assert note not in set().union(*(b.paths for b in batches))  # the old watch's stale name is gone


def test_a_folder_renamed_to_a_dot_name_is_unwatched_and_watched_again_when_renamed_back(
        root: Path, start: Start, handled: list[Path]):
    write(root / "notes" / "a.md", "a\n")
    watcher, recorder = start()
    os.rename(root / "notes", root / ".notes")
    wait_until(watcher, recorder, lambda got: any(root / "notes" in b.folders for b in got))
    assert watcher.watched_folders == set()
    handled.clear()
    before = watcher.batches_delivered
    write(root / ".notes" / "b.md", "hidden\n")
    assert fence(watcher, recorder)[before:] == []
    assert not any(".notes" in p.parts for p in handled)
    os.rename(root / ".notes", root / "notes")
    wait_until(watcher, recorder, lambda got: sum(root / "notes" in b.folders for b in got) >= 2)
    assert watcher.watched_folders == {"notes"}
    note = write(root / "notes" / "c.md", "c\n")
    wait_until(watcher, recorder, lambda got: any(note in b.paths for b in got))


def test_past_the_bound_on_folder_watches_the_vault_is_watched_as_one_tree(
        root: Path, start: Start, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(folder_watches, "MAX_FOLDER_WATCHES", 2)
    for name in ("a", "b"):
        write(root / name / "n.md", name)
    watcher, recorder = start()
    assert watcher.watched_folders == {"a", "b"}
    write(root / "c" / "n.md", "c")
    wait_until(watcher, recorder, lambda got: any(root / "c" in b.folders for b in got))
    assert watcher.watched_folders == set()  # one recursive watch on the vault now
    notes = [write(root / name / "later.md", "later") for name in ("a", "b", "c")]
    wait_until(watcher, recorder, lambda got: set(notes) <= set().union(*(b.paths for b in got)))


def test_a_vault_with_more_top_level_folders_than_the_bound_starts_as_one_tree(
        root: Path, start: Start, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(folder_watches, "MAX_FOLDER_WATCHES", 2)
    for name in ("a", "b", "c"):
        write(root / name / "n.md", name)
    watcher, recorder = start()
    assert watcher.watched_folders == set()
    note = write(root / "c" / "deep" / "later.md", "later")
    wait_until(watcher, recorder, lambda got: any(note in b.paths for b in got))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")
def test_a_folder_watch_the_kernel_refuses_later_asks_for_a_full_reconcile_and_the_rescan_adds_it(
        root: Path, start: Start, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    watcher, recorder = start(rescan_interval=0.5)
    real = inotify_c.InotifyFD.add_callback

    def limit_reached(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(inotify_c.InotifyFD, "add_callback", limit_reached)
    with caplog.at_level(logging.WARNING, logger="memdir.watcher"):
        (root / "refused").mkdir()
        wait_until(watcher, recorder, lambda got: "could not watch" in caplog.text and any(b.full for b in got))
    assert "inotify watch limit reached" in caplog.text
    assert watcher.watched_folders == set()
    monkeypatch.setattr(inotify_c.InotifyFD, "add_callback", real)
    fulls = sum(b.full for b in recorder.batches)
    wait_until(watcher, recorder, lambda got: sum(b.full for b in got) > fulls)  # the periodic rescan retries
    assert watcher.watched_folders == {"refused"}
    note = write(root / "refused" / "n.md", "seen now\n")
    wait_until(watcher, recorder, lambda got: any(note in b.paths for b in got))


# -- fallback to polling ------------------------------------------------------------------------------


def _change_a_note_and_expect_it(root: Path, watcher: VaultWatcher, recorder: Recorder) -> None:
    note = root / "polled.md"
    note.write_text("changed while polling\n")
    batches = wait_until(watcher, recorder, lambda got: any(note in batch.paths for batch in got))
    assert batches[-1].paths == {note}


def test_polling_can_be_forced_and_still_delivers_batches(root: Path, start: Start):
    write(root / "polled.md", "before\n")
    watcher, recorder = start(polling=True, polling_interval=0.1)
    assert watcher.mode == "polling"
    _change_a_note_and_expect_it(root, watcher, recorder)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux-only")
def test_an_exhausted_inotify_watch_limit_falls_back_to_polling_without_leaking_threads(
    root: Path, start: Start, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    def limit_reached(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(inotify_c.InotifyFD, "add_callback", limit_reached)
    write(root / "polled.md", "before\n")
    threads_before = set(threading.enumerate())
    with caplog.at_level(logging.WARNING, logger="memdir.watcher"):
        watcher, recorder = start(polling_interval=0.1)
    assert watcher.mode == "polling"
    assert "inotify watch limit reached" in caplog.text
    _change_a_note_and_expect_it(root, watcher, recorder)
    watcher.stop()
    assert set(threading.enumerate()) == threads_before


def test_running_out_of_inotify_instances_falls_back_to_polling(
    root: Path, start: Start, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    def no_instances_left() -> None:
        raise OSError(errno.EMFILE, "inotify instance limit reached")

    monkeypatch.setattr(watcher_module, "Observer", no_instances_left)
    write(root / "polled.md", "before\n")
    with caplog.at_level(logging.WARNING, logger="memdir.watcher"):
        watcher, recorder = start(polling_interval=0.1)
    assert watcher.mode == "polling"
    assert "instance limit" in caplog.text
    _change_a_note_and_expect_it(root, watcher, recorder)


# -- robustness and lifecycle -------------------------------------------------------------------------


def test_an_exception_in_on_batch_is_logged_and_later_batches_still_arrive(
    root: Path, start: Start, caplog: pytest.LogCaptureFixture
):
    watcher, recorder = start(Recorder(fail_first=1))
    first = write(root / "first.md", "1\n")
    with caplog.at_level(logging.ERROR, logger="memdir.watcher"):
        wait_until(watcher, recorder, lambda got: len(got) >= 1)
    assert "index is on fire" in caplog.text
    second = write(root / "second.md", "2\n")
    batches = wait_until(watcher, recorder, lambda got: any(second in batch.paths for batch in got))
    assert batches == [Batch(frozenset({first})), Batch(frozenset({second}))]


def test_flush_now_delivers_pending_paths_without_waiting_for_the_debounce(root: Path, start: Start):
    watcher, recorder = start(debounce=60.0, max_wait=120.0)
    note = write(root / "note.md", "saved just before shutdown\n")
    deadline = time.monotonic() + TIMEOUT
    # spins only until watchdog has handed over the event, a few milliseconds
    while not watcher.flush_now():
        assert time.monotonic() < deadline, "the event never reached the watcher"
    assert recorder.batches[0] == Batch(frozenset({note}))
    # The save's later events (modified, closed) may still arrive after the first flush; whatever
    # else is delivered concerns the same note, and nothing waited for the 60 s debounce.
    watcher.flush_now()
    assert all(batch == Batch(frozenset({note})) for batch in recorder.batches)


def test_stop_is_idempotent_and_joins_every_thread(root: Path):
    threads_before = set(threading.enumerate())
    recorder = Recorder()
    with VaultWatcher(root, recorder, rescan_interval=0.5) as watcher:
        write(root / "note.md", "x\n")
        assert watcher.wait_for_batch(0, TIMEOUT)
        assert len(set(threading.enumerate()) - threads_before) >= 2  # observer, emitter(s), our worker
    watcher.stop()
    watcher.stop()
    assert set(threading.enumerate()) == threads_before
    VaultWatcher(root, recorder).stop()  # stopping a watcher that never started is a no-op too


def test_a_stopped_watcher_cannot_be_started_again(root: Path):
    watcher = VaultWatcher(root, Recorder())
    watcher.start()
    watcher.stop()
    with pytest.raises(RuntimeError, match="only once"):
        watcher.start()


def test_a_missing_vault_folder_is_an_error_not_a_reason_to_poll(tmp_path: Path):
    with pytest.raises(NotADirectoryError):
        VaultWatcher(tmp_path / "nowhere", Recorder()).start()


@pytest.mark.parametrize(
    "options",
    [{"debounce": -1.0}, {"debounce": 1.0, "max_wait": 0.5}, {"rescan_interval": 0.0}, {"polling_interval": 0.0}],
)
def test_timings_that_would_spin_or_never_flush_are_refused(root: Path, options: dict[str, float]):
    with pytest.raises(ValueError):
        VaultWatcher(root, Recorder(), **options)  # type: ignore[arg-type]
