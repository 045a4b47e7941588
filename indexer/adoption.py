"""An index generation without this user's stamp, checked by what its files are instead of rebuilt.

The stamp (vault/state_stamp.py) keeps memdir from parsing an index that came from elsewhere (an archive's
`.memdir/`), because parsing one could run code. An index built by a memdir from before stamps carries none either,
so every existing vault was rebuilt once on upgrade: at 100k memories the server answered nothing for that whole
rebuild (bench/results/s23-scale23.md). A generation is adopted instead, its owner stamping it, when every file of
it is read by code that runs nothing it holds and it has the shape memdir writes:

- the keyword index: Whoosh's pickles name only what memdir's own index holds (safe_pickle.py), and its table of
  contents holds memdir's schema exactly and segments memdir's Whoosh makes (names Whoosh draws, counts as numbers);
- vectors.faiss: parsed here byte by byte first, FAISS's IndexIDMap2 over an IndexFlatIP of this embedder's width and
  nothing else, its size exactly what its counts say, before FAISS's C++ reader sees it;
- manifest.sqlite: its schema (tables, indexes, triggers) each one a fresh manifest creates, read with
  `trusted_schema` off (SQLite then calls no function a schema names);
- units.f16 and vectors.log are read by numpy from bytes, with their sizes checked as they open (stored_vectors.py);
- every one of them a regular file in a real folder: a symlink (an archive carries them) is not followed.

Anything else (another shape, a name not allowed, an older generation's layout) is not adopted: rebuilt, as before.
What adoption cannot tell is whether the rows agree with the files: the owner's open reads every file again (its
deep reconcile) and indexes what changed, as after any open.
"""

from __future__ import annotations

import re
from collections import defaultdict
import sqlite3
import stat
import struct
import tempfile
from pathlib import Path
from typing import Any

from whoosh.filedb.filestore import FileStorage

from .manifest import Manifest

FAISS_FILE, STORED_FILE, MANIFEST_FILE, KEYWORD_FOLDER = "vectors.faiss", "units.f16", "manifest.sqlite", "keyword"
# What a generation may hold besides its meta.json and stamp: anything else is not memdir's current layout.
KNOWN = {FAISS_FILE, STORED_FILE, MANIFEST_FILE, KEYWORD_FOLDER, "vectors.log", "meta.json", "stamp",
         f"{MANIFEST_FILE}-wal", f"{MANIFEST_FILE}-shm"}
# FAISS's index header (faiss/impl/index_write.cpp write_index_header): d, ntotal, two unused counts, is_trained,
# metric type (0: inner product; no metric argument follows for it).
_HEADER = struct.Struct("<iqqqBi")
_UNUSED = 1 << 20
_SEGMENT_ID = re.compile(r"[a-z0-9]{16}")


class NotAdopted(Exception):
    """Why a generation is not adopted (it is rebuilt)."""


def check(generation: Path, dim: int) -> None:
    """Raise NotAdopted unless every file of `generation` is what memdir writes (see the module's docstring)."""
    _real_folder(generation)
    for entry in generation.iterdir():
        if entry.name not in KNOWN and not entry.name.endswith(".tmp"):  # temp files: swept by the owner's open
            raise NotAdopted(f"{entry.name} is not a file of memdir's index")
    for name in (FAISS_FILE, STORED_FILE, MANIFEST_FILE):
        _regular(generation / name)
    for name in ("vectors.log", f"{MANIFEST_FILE}-wal", f"{MANIFEST_FILE}-shm"):
        if (generation / name).exists() or (generation / name).is_symlink():
            _regular(generation / name)
    check_faiss(generation / FAISS_FILE, dim)
    check_manifest(generation / MANIFEST_FILE)
    check_keywords(generation / KEYWORD_FOLDER)


def check_faiss(path: Path, dim: int) -> None:
    """An IndexIDMap2 over an IndexFlatIP of `dim`, and nothing more: FAISS's reader then reads only numbers."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(2 * (4 + _HEADER.size) + 8)
        if len(head) < 2 * (4 + _HEADER.size) + 8 or head[:4] != b"IxM2" or head[4 + _HEADER.size:8 + _HEADER.size] != b"IxFI":
            raise NotAdopted(f"{path.name} is not the flat inner-product index memdir writes")
        outer, inner = _HEADER.unpack_from(head, 4), _HEADER.unpack_from(head, 8 + _HEADER.size)
        count = outer[1]
        for d, total, unused, unused2, trained, metric in (outer, inner):
            if (d, total, unused, unused2, trained, metric) != (dim, count, _UNUSED, _UNUSED, 1, 0):
                raise NotAdopted(f"{path.name} has a header memdir does not write")
        if count < 0 or size != len(head) + 4 * count * dim + 8 + 8 * count:
            raise NotAdopted(f"{path.name} is {size} bytes, not what {count} vectors of {dim} take")
        (codes,) = struct.unpack_from("<q", head, len(head) - 8)
        handle.seek(len(head) + 4 * count * dim)
        (ids,) = struct.unpack("<q", handle.read(8))
        if codes != count * dim or ids != count:
            raise NotAdopted(f"{path.name} counts its parts otherwise than its header")


def check_manifest(path: Path) -> None:
    """Every table, index and trigger of the manifest one a fresh manifest creates (an older one may lack some)."""
    with tempfile.TemporaryDirectory(prefix="memdir-adopt-") as folder:
        fresh = Path(folder) / MANIFEST_FILE
        Manifest(fresh).close()
        expected = _schema(fresh)
    found = _schema(path)
    foreign = found - expected
    if foreign:
        raise NotAdopted(f"{path.name} holds what memdir's manifest does not: {sorted(foreign)[0][:2]}")


def _schema(path: Path) -> set[tuple[str, str, str, str | None]]:
    # Read-only, with its WAL (a trigger may be there; SQLite makes the -shm index of it): the schema the open will read.
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        return {tuple(row) for row in db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        raise NotAdopted(f"{path.name} is not readable ({exc})") from None
    finally:
        db.close()


def check_keywords(folder: Path) -> None:
    """The table of contents (read by the restricted unpickler) holds memdir's schema and Whoosh's own segments."""
    from whoosh import index as whoosh_index

    from .keyword import schema  # which installs the restricted unpickler (safe_pickle.py)

    _real_folder(folder)
    for entry in folder.iterdir():
        _regular(entry)
    storage = _Storage(str(folder), readonly=True)
    try:
        toc = whoosh_index.TOC.read(storage, "MAIN")
    except Exception as exc:  # noqa: BLE001 - a refused name, a torn file: not adopted, whatever Whoosh raised
        raise NotAdopted(f"its keyword index does not read ({type(exc).__name__}: {exc})") from None
    finally:
        storage.close_opened()
    if toc.schema != schema():
        raise NotAdopted("its keyword index holds another schema than memdir's")
    if type(toc.segments) is not list or not all(_whoosh_segment(segment) for segment in toc.segments):
        raise NotAdopted("its keyword index lists a segment memdir's Whoosh does not make")


def _whoosh_segment(segment: object) -> bool:
    """A segment as Whoosh's W3 codec makes it: its file names from `segid` (16 letters and digits Whoosh drew), its
    counts numbers; no other attribute (a method of Whoosh's would read it)."""
    from whoosh.codec.whoosh3 import W3Codec, W3Segment

    if type(segment) is not W3Segment or set(vars(segment)) - {"_fieldlengths"} != {
            "indexname", "segid", "_codec", "_doccount", "_deleted", "compound"}:
        return False
    codec, deleted = vars(segment)["_codec"], vars(segment)["_deleted"]
    lengths = vars(segment).get("_fieldlengths", defaultdict(int))  # field name -> its terms in the segment
    return (type(lengths) is defaultdict and lengths.default_factory is int
            and all(type(k) is str and type(v) is int for k, v in lengths.items())
            and segment.indexname == "MAIN" and type(segment.segid) is str and bool(_SEGMENT_ID.fullmatch(segment.segid))
            and type(segment._doccount) is int and type(segment.compound) is bool
            and (deleted is None or (type(deleted) is set and all(type(n) is int for n in deleted)))
            and type(codec) is W3Codec and set(vars(codec)) == {"_blocklimit", "_compression", "_inlinelimit"}
            and all(type(v) is int for v in vars(codec).values()))


class _Storage(FileStorage):
    """Whoosh's storage, closing what a read opened: TOC.read leaves its file open when the read fails."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.opened: list[Any] = []

    def open_file(self, name: str, **kwargs: Any) -> Any:
        handle = super().open_file(name, **kwargs)
        self.opened.append(handle)
        return handle

    def close_opened(self) -> None:
        for handle in self.opened:
            if not handle.is_closed:
                handle.close()


def _real_folder(path: Path) -> None:
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode):
        raise NotAdopted(f"{path.name} is not a folder (a symlink is not followed)")


def _regular(path: Path) -> None:
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise NotAdopted(f"{path.name} is missing") from None
    if not stat.S_ISREG(info.st_mode):
        raise NotAdopted(f"{path.name} is not a regular file (a symlink is not followed)")
