"""A PDF's text, read by pypdf in a child process with a CPU and a memory budget.

pypdf is a pure-Python reader that follows what the file says. A 238 KB PDF whose one page's content stream inflates
to 70 MB (pypdf's own cap is 75 MB a stream) kept it parsing for over 5 minutes of CPU at 430 MB; a content stream of
100,000 nested arrays raised RecursionError and a huge declared cross-reference table LimitReachedError, neither an
error ingest expected: the whole `memdir ingest` of a folder ended in a traceback, the files after it not read
(bench/results/s22-attack22.md). A child's limits (RLIMIT_CPU, RLIMIT_AS) bound any document whatever pypdf does with
it, its failures of every kind come back as one reason, and a server's threads do not wait on a parse holding the GIL.
A 500-page text book reads in about 5 s of CPU (its text, 1.8 MB, is near what one memory file holds).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from vault.errors import ValidationError

CPU_SECONDS = 60  # ~10x a 500-page book
MEMORY_BYTES = 2 << 30  # the 70 MB stream above peaked at 430 MB
MAX_CHARS = 8_000_000  # past a memory file's limit (2 MB by default) already: nothing more is worth reading
WALL_PER_CPU_SECOND = 20  # on a loaded machine a child gets a small share of a core
CHILD = Path(__file__).with_name("pdf_child.py")


def read_pdf(path: Path, data: bytes) -> tuple[list[str], str]:
    """Each page's text and the document's title; ValidationError (naming `path`) when pypdf cannot read it within
    the budget."""
    try:
        done = subprocess.run([sys.executable, "-I", str(CHILD), str(CPU_SECONDS), str(MEMORY_BYTES), str(MAX_CHARS)],
                              input=data, capture_output=True, timeout=CPU_SECONDS * WALL_PER_CPU_SECOND, check=False)
    except subprocess.TimeoutExpired:
        raise ValidationError(f"{path}: reading the PDF took longer than {CPU_SECONDS * WALL_PER_CPU_SECOND} s; "
                              "not ingested") from None
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ValidationError(f"{path}: reading the PDF took more than {CPU_SECONDS} s of CPU (a document built to "
                              "exhaust its reader, or broken); not ingested")
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        told = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise ValidationError(f"{path}: not a readable PDF (the reader failed: {told[0][:300]})") from None
    if answer.get("encrypted"):
        raise ValidationError(f"{path}: the PDF is encrypted; decrypt it first")
    if "error" in answer:
        raise ValidationError(f"{path}: not a readable PDF ({answer['error']})")
    return [str(page) for page in answer["pages"]], str(answer["title"])
