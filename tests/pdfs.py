"""Small real PDFs built byte by byte for the books tests (one text line per page, Helvetica)."""

from __future__ import annotations


def pdf_with_pages(pages: list[str], title: str | None = None) -> bytes:
    """A valid PDF 1.4 with one page per string; an empty string makes a page with no text layer."""
    objects: list[bytes] = []
    count = len(pages)
    page_ids = [4 + 2 * i for i in range(count)]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(b"<< /Type /Pages /Kids [" + b" ".join(f"{p} 0 R".encode() for p in page_ids)
                   + f"] /Count {count} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for i, text in enumerate(pages):
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        stream = f"BT /F1 12 Tf 72 720 Td ({escaped}) Tj ET".encode() if text else b""
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                       f"/Contents {page_ids[i] + 1} 0 R >>".encode())
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    info = None
    if title:
        objects.append(f"<< /Title ({title}) >>".encode())
        info = len(objects)
    return _assembled(objects, f" /Info {info} 0 R" if info else "")


def _assembled(objects: list[bytes], trailer_extra: str = "", declared_objects: int | None = None) -> bytes:
    """The file: numbered objects (the first the catalog), the cross-reference table (declaring `declared_objects`
    when given) and the trailer."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {declared_objects or len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    trailer = f"<< /Size {len(objects) + 1} /Root 1 0 R{trailer_extra} >>"
    out += f"trailer\n{trailer}\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def pdf_with_content(content: bytes, *, deflate: bool = False, declared_objects: int | None = None) -> bytes:
    """A one-page PDF whose page's content stream is `content` (deflated when asked); `declared_objects` overrides the
    count its cross-reference table declares."""
    import zlib

    data = zlib.compress(content, 9) if deflate else content
    stream = f"<< /Length {len(data)}{' /Filter /FlateDecode' if deflate else ''} >>\nstream\n".encode() + data
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>", stream + b"\nendstream"]
    return _assembled(objects, declared_objects=declared_objects)


def hostile_pdfs() -> dict[str, bytes]:
    """PDFs pypdf fails on with errors of its own kinds: 100,000 nested arrays in a content stream (RecursionError), a
    cross-reference table declaring 10^8 objects in 600 bytes (LimitReachedError)."""
    return {"nested.pdf": pdf_with_content(b"BT /F1 12 Tf 72 720 Td " + b"[" * 100_000 + b"(x)" + b"]" * 100_000
                                           + b" TJ ET", deflate=True),
            "declared.pdf": pdf_with_content(b"BT /F1 12 Tf 72 720 Td (Deploy checklist) Tj ET",
                                             declared_objects=99_999_999)}


def inflating_pdf(megabytes: int = 70) -> bytes:
    """A 240 KB PDF whose one content stream inflates to `megabytes` MB of text-showing operators (pypdf's own cap is
    75 MB a stream): pypdf parsed the 70 MB one for over 5 minutes of CPU."""
    unit = b"(" + b"a" * 75 + b") Tj\n"
    return pdf_with_content(b"BT /F1 12 Tf 72 720 Td " + unit * (megabytes * 1_000_000 // len(unit)) + b" ET",
                            deflate=True)
