"""A command on a vault it cannot write for want of room: a file size limit (`ulimit -f`, EFBIG), as a real
process meets it. SQLite says "disk I/O error" for both a full disk and the limit; searching needs no room."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from indexer.generations import Layout
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index

ROOT = Path(__file__).resolve().parents[1]


def memdir_limited(limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    """`memdir ARGS` in a process that may not write files over `limit` bytes (Python ignores SIGXFSZ)."""
    return subprocess.run([sys.executable, "-m", "mcp_server", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)))


def test_a_search_under_a_file_size_limit_answers_from_the_index_and_a_reindex_names_the_limit(hashing_root: Path):
    # SQLite could not make the manifest's 32 KB -shm file: a search died in a traceback. A reindex died in a
    # traceback from its vector file's write (EFBIG), and a first build from the embedding cache's commit.
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    open_index(hashing_root).close()
    generation = Layout(hashing_root).current()

    search = memdir_limited(8192, "search", "celery retries", "--vault", str(hashing_root))
    assert search.returncode == 0 and "m-0000000a" in search.stdout, search.stderr
    assert "ulimit -f" in search.stderr and "Traceback" not in search.stderr

    reindex = memdir_limited(8192, "reindex", "--vault", str(hashing_root))
    assert reindex.returncode == 1 and "Traceback" not in reindex.stderr, reindex.stderr
    assert "file size limit: could not write" in reindex.stderr and "8,192 bytes (ulimit -f)" in reindex.stderr
    assert Layout(hashing_root).current() == generation and [p.name for p in generation.parent.glob("gen-*")] == [
        generation.name]


def test_a_first_build_under_a_file_size_limit_names_the_limit(hashing_root: Path):
    for n in range(40):
        write(hashing_root, f"history/n{n}.md", memory_text(f"m-000000{n:02d}", f"Note {n}", f"note {n}: " + "word " * 200))
    build = memdir_limited(65536, "search", "note", "--vault", str(hashing_root))
    assert build.returncode == 1 and "Traceback" not in build.stderr, build.stderr
    assert "file size limit" in build.stderr and "65,536 bytes (ulimit -f)" in build.stderr


def test_a_search_on_a_full_disk_answers_from_the_index_read_only(hashing_root: Path, monkeypatch):
    # On a full 3 MB tmpfs SQLite cannot grow the -shm file every WAL connection maps: `memdir search` failed with
    # "disk full: could not open the index" (s19). Exclusive locking mode needs no -shm: what a full disk allows.
    import shutil
    import sqlite3
    from collections import namedtuple

    from click.testing import CliRunner

    from indexer import index as index_module
    from mcp_server.cli.commands import cli

    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    open_index(hashing_root).close()
    real = index_module.Manifest

    def no_shm(path: Path, owner: bool = True, **kwargs: bool) -> object:
        if "shared_memory" not in kwargs or kwargs["shared_memory"]:
            raise sqlite3.OperationalError("disk I/O error")  # what SQLite says when it cannot grow the -shm
        return real(path, owner=owner, **kwargs)

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(3 << 20, 3 << 20, 0))
    monkeypatch.setattr(index_module, "Manifest", no_shm)
    result = CliRunner().invoke(cli, ["search", "celery retries", "--vault", str(hashing_root)])
    assert result.exit_code == 0 and "m-0000000a" in result.output, result.output
    assert not (hashing_root / ".memdir" / "quarantine").exists()


def test_a_damaged_index_under_a_file_size_limit_it_never_reached_is_rebuilt_not_blamed_on_the_limit(
        hashing_root: Path):
    # With any `ulimit -f` set (here 1 GB, which nothing here comes near), every failed open was taken for the limit:
    # a truncated vector file was never moved aside and rebuilt, and every command said to raise the limit.
    write(hashing_root, "history/a.md", memory_text("m-0000000a", "Alpha", "alpha: celery retries need idempotent tasks"))
    open_index(hashing_root).close()
    generation = Layout(hashing_root).current()
    vectors = generation / "vectors.faiss"
    vectors.write_bytes(vectors.read_bytes()[: vectors.stat().st_size // 3])

    search = memdir_limited(1 << 30, "search", "celery retries", "--vault", str(hashing_root))
    assert search.returncode == 0 and "m-0000000a" in search.stdout, search.stderr
    assert "ulimit -f" not in search.stderr and "Traceback" not in search.stderr, search.stderr
    assert Layout(hashing_root).current() != generation
    assert [p.name.startswith(generation.name) for p in (hashing_root / ".memdir" / "quarantine").iterdir()] == [True]
