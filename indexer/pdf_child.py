"""Run as a script by indexer/pdf_text.py (`python -I pdf_child.py CPU_SECONDS MEMORY_BYTES MAX_CHARS`): the PDF on
stdin, its pages' text and title as JSON on stdout. It imports pypdf only (no memdir module: it runs isolated, with no
path of the tree) and sets its own limits first, so whatever pypdf does with a hostile file ends within them."""

from __future__ import annotations

import io
import json
import resource
import sys


def main() -> None:
    cpu_seconds, memory_bytes, max_chars = (int(a) for a in sys.argv[1:4])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))  # SIGXCPU, then SIGKILL 5 s later
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    data = sys.stdin.buffer.read()
    try:
        answer = read(data, max_chars)
    except MemoryError:
        answer = {"error": f"MemoryError: reading it needed more than {memory_bytes >> 20} MB"}
    except BaseException as exc:  # noqa: BLE001 - pypdf raises many kinds (RecursionError, LimitReachedError, ...)
        answer = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
    sys.stdout.write(json.dumps(answer))


def read(data: bytes, max_chars: int) -> dict[str, object]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    if reader.is_encrypted:
        return {"encrypted": True}
    pages: list[str] = []
    total = 0
    for page in reader.pages:
        pages.append(page.extract_text() or "")
        total += len(pages[-1])
        if total > max_chars:
            return {"error": f"its text is over {max_chars:,} characters by page {len(pages)}, more than a memory holds"}
    title = (reader.metadata.title if reader.metadata else None) or ""
    return {"pages": pages, "title": str(title)}


if __name__ == "__main__":
    main()
