"""A sync that read a vault's worth of files gives the memory it freed back to the system; a small one does not pay for it."""

from pathlib import Path

import indexer.index as index_module

from .helpers import open_index


def test_a_build_releases_freed_memory_and_an_edit_does_not(example_root: Path, monkeypatch):
    calls = []
    monkeypatch.setattr(index_module, "release_free_memory", lambda: calls.append(1))
    monkeypatch.setattr(index_module, "RELEASE_AFTER", 10)  # the example vault is small
    index = open_index(example_root)
    try:
        assert calls  # the build (and the open's deep reconcile, which re-reads nothing big) released once
        built = len(calls)
        path = next(p for p in example_root.rglob("*.md") if ".memdir" not in p.parts and p.stat().st_size > 100)
        path.write_text(path.read_text() + "\nOne more line.\n")
        index.sync([path])
        assert len(calls) == built
    finally:
        index.close()


def test_on_glibc_the_trim_is_found_and_elsewhere_releasing_is_a_no_op():
    import platform

    from indexer import heap

    heap.release_free_memory()  # never an error, wherever it runs
    assert (heap._trim() is not None) == (platform.libc_ver()[0] == "glibc")
