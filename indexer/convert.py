"""Reference documents (PDF, HTML, plain text, Markdown) turned into Markdown for the books collection.

The written Markdown is the truth afterwards (people edit it like any memory), so conversion keeps
what a reader needs to find their way: headings from Markdown and HTML, one `## Page N` section per
PDF page (a hit then says `§ Page 12`), paragraphs from text. Libraries: the standard library's
html.parser for HTML (no network, no native code), and pypdf, a pure-Python PDF reader, for PDF
(text layers only: a scanned PDF without one is refused, memdir does no OCR), in a child process with a CPU and
memory budget (pdf_text.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from vault.errors import ValidationError
from vault.markdown import section_count

from .pdf_text import read_pdf

SUFFIXES = {".pdf": "pdf", ".html": "html", ".htm": "html", ".txt": "text", ".md": "markdown", ".markdown": "markdown"}
_FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n", re.DOTALL)


@dataclass(frozen=True)
class Document:
    title: str
    markdown: str  # the body written to books/
    kind: str  # pdf | html | text | markdown
    parts: int  # pages for a PDF, sections (headings) otherwise


def convert(path: Path, data: bytes) -> Document:
    """The document at `path` (its bytes already read) as Markdown; ValidationError says why not."""
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ValidationError(f"{path}: unsupported type {path.suffix or '(none)'}; memdir ingests "
                              f"{', '.join(sorted(SUFFIXES))}")
    if kind == "pdf":
        return _pdf(path, data)
    text = _text(path, data)
    if kind == "html":
        title, markdown = _html(text)
    elif kind == "markdown":
        markdown = _FRONTMATTER.sub("", text, count=1)
        heading = re.search(r"^#\s+(.+)$", markdown, re.MULTILINE)
        title = heading.group(1).strip() if heading else ""
    else:
        markdown = _paragraphs(text)
        first = markdown.split("\n\n", 1)
        # A short first line standing alone is the document's title ("Deploy checklist").
        title = first[0].strip() if len(first) > 1 and len(first[0]) <= 80 and "\n" not in first[0] else ""
    markdown = markdown.strip()
    if not markdown:
        raise ValidationError(f"{path}: no text to ingest (the document is empty)")
    return Document(title or _title_from_name(path), markdown + "\n", kind, section_count(markdown))


def _text(path: Path, data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise ValidationError(f"{path}: looks binary (NUL bytes) although its name says {path.suffix}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"{path}: not UTF-8 text (byte {exc.start}); convert it to UTF-8 first") from None


def _paragraphs(text: str) -> str:
    """Plain text keeps its paragraphs; lines inside one are joined unless they look like a list or code."""
    blocks = re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
    out = []
    for block in blocks:
        lines = [line.rstrip() for line in block.strip("\n").splitlines()]
        if any(line.startswith(("    ", "\t", "- ", "* ")) or re.match(r"\d+[.)] ", line) for line in lines):
            out.append("\n".join(lines))
        else:
            out.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(b for b in out if b.strip())


def _title_from_name(path: Path) -> str:
    return re.sub(r"[-_]+", " ", path.stem).strip().capitalize() or path.name


# -- HTML ---------------------------------------------------------------------------------

_SKIPPED = frozenset({"script", "style", "nav", "header", "footer", "aside", "noscript", "template", "svg", "form"})
_BLOCKS = frozenset({"p", "div", "section", "article", "main", "li", "tr", "pre", "blockquote", "table", "ul", "ol",
                     "dd", "dt", "figure", "br", "hr"})


class _Markdown(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.title = ""
        self.in_title = False
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        elif not self.skip and re.fullmatch(r"h[1-6]", tag):
            self.out.append("\n\n" + "#" * int(tag[1]) + " ")
        elif not self.skip and tag == "pre":
            self.pre += 1
            self.out.append("\n\n```\n")
        elif not self.skip and tag == "li":
            self.out.append("\n- ")
        elif not self.skip and tag in _BLOCKS:
            self.out.append("\n\n")
        elif not self.skip and tag == "code" and not self.pre:
            self.out.append("`")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.in_title = False
        elif not self.skip and tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.out.append("\n```\n\n")
        elif not self.skip and (re.fullmatch(r"h[1-6]", tag) or tag in _BLOCKS - {"li"}):
            self.out.append("\n\n")
        elif not self.skip and tag == "code" and not self.pre:
            self.out.append("`")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
        elif not self.skip:
            self.out.append(data if self.pre else re.sub(r"\s+", " ", data))


def _html(text: str) -> tuple[str, str]:
    parser = _Markdown()
    parser.feed(text)
    parser.close()
    body = "".join(parser.out)
    lines = [line.rstrip() if line.startswith(("```", "    ")) else line.strip() for line in body.splitlines()]
    markdown = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    title = " ".join(parser.title.split())
    if not title:
        heading = re.search(r"^#\s+(.+)$", markdown, re.MULTILINE)
        title = heading.group(1).strip() if heading else ""
    return title, markdown


# -- PDF ----------------------------------------------------------------------------------

def _pdf(path: Path, data: bytes) -> Document:
    pages, metadata_title = read_pdf(path, data)
    if not any(p.strip() for p in pages):
        raise ValidationError(f"{path}: the PDF has no text layer (a scan?); memdir does no OCR")
    sections = [f"## Page {n}\n\n{_paragraphs(text)}" for n, text in enumerate(pages, 1) if text.strip()]
    return Document(str(metadata_title).strip() or _title_from_name(path), "\n\n".join(sections) + "\n", "pdf",
                    len(pages))
