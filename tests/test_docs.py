"""The documentation covers what memdir declares: every command, MCP tool and memdir.toml key, and the
generated reference pages are what the code says today (as sqlite-utils checks its docs)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from mcp_server import reference

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
GUIDES = sorted(path for path in DOCS.glob("*.md"))
LINK = re.compile(r"\[(?:\\.|[^\]\\])*\]\(([^)#\s]*)(#[^)\s]*)?\)")
REFERENCE = re.compile(r"^\[[^\]]+\]: (\S+?)(#\S*)?$", re.M)
PROMPT = re.compile(r"^\S*\$ ")  # a command in a console block: "$ memdir ...", "/tmp/x$ memdir ..."
BENCH = [REPO / "bench" / "README.md", *sorted((REPO / "bench" / "results").glob("*.md"))]


@pytest.mark.parametrize("page", sorted(reference.PAGES))
def test_each_generated_reference_page_is_what_the_code_declares_today(page: str):
    committed = (DOCS / "reference" / page).read_text(encoding="utf-8")
    assert committed == reference.PAGES[page](), f"docs/reference/{page} is stale: run python -m mcp_server.reference"


@pytest.mark.parametrize("page", sorted(reference.PAGES))
def test_each_reference_page_names_everything_it_covers(page: str):
    text = (DOCS / "reference" / page).read_text(encoding="utf-8")
    headings = set(re.findall(r"^## (.+)$", text, re.M))
    rows = set(re.findall(r"^\| `([^`]+)` \|", text, re.M))
    for name in reference.documented_names()[page]:
        if page == "config.md":
            section, key = name.split(".", 1)
            assert f"[{section}]" in headings and key in rows, f"{name} is not in docs/reference/config.md"
        else:
            assert name in headings, f"{name} is not in docs/reference/{page}"


def test_every_command_has_a_guide_section_with_what_it_does():
    """The generated page lists options; a person also needs a section saying what the command is for."""
    guide_headings = "\n".join(line for path in GUIDES for line in path.read_text(encoding="utf-8").splitlines()
                               if line.startswith("#"))
    missing = [path for path in reference.documented_names()["cli.md"] if f"`{path}" not in guide_headings
               and f"{path} " not in guide_headings]
    assert missing == []


def test_the_hook_command_has_a_guide_section_headed_by_its_usage_and_each_client_event_is_named():
    """`memdir hook` is answered before click, so the generic check sees only its name: a new event or client
    would get no guide section. Its section is headed by the usage line it prints."""
    from mcp_server.clients import hooks

    usage = hooks.USAGE.removeprefix("usage: ").split("  ")[0]
    headings = [line for path in GUIDES for line in path.read_text(encoding="utf-8").splitlines()
                if line.startswith("#") and "memdir hook " in line]
    assert any(f"`{usage}`" in heading for heading in headings), f"no guide section headed `{usage}`"
    guides = "\n".join(path.read_text(encoding="utf-8") for path in GUIDES)
    assert [event for event in hooks.EVENTS.values() if event not in guides] == []


def test_every_setting_a_guide_names_exists():
    """A guide that names `[section] key` must name a setting memdir.toml still has (a renamed or retired key
    left in a page describes behaviour that is gone)."""
    from mcp_server.config import SECTIONS

    keys = {section: {item.name for item in dataclasses.fields(cls)} for section, cls in SECTIONS.items()}
    named = {(path.name, section, key) for path in [REPO / "README.md", *GUIDES]
             for section, key in re.findall(r"`\[([a-z_]+)\] ([a-z_]+)", path.read_text(encoding="utf-8"))}
    unknown = [(page, section, key) for page, section, key in sorted(named) if key not in keys.get(section, ())]
    assert unknown == []


def test_each_command_output_in_the_guides_numbers_its_results_once():
    """A re-run pasted over part of an older one leaves results numbered twice under one command (1..5, then
    4, 5 again); each command's numbered results in a guide's code block count 1, 2, 3, ..."""
    broken = []
    for path in [REPO / "README.md", *GUIDES]:
        fenced, numbers = False, []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            ends_output = (fenced and line.strip() == "```") or (fenced and PROMPT.match(line))
            if ends_output:
                if numbers != list(range(1, len(numbers) + 1)):
                    broken.append(f"{path.name}:{number}: {numbers}")
                numbers = []
            if line.startswith("```") and (line.strip() == "```" or not fenced):  # "```sql" inside is a memory's text
                fenced = not fenced
            elif fenced and (result := re.match(r"(\d+)\. \[", line)):
                numbers.append(int(result.group(1)))
    assert broken == []


def test_every_source_file_and_test_a_guide_names_exists():
    """A module moved or a test renamed leaves a page pointing at nothing (trust.md named mcp_server/leaks.py after
    it moved under service/)."""
    missing = []
    for path in [REPO / "README.md", *GUIDES]:
        text = path.read_text(encoding="utf-8")
        for name, test in re.findall(r"\b((?:vault|indexer|mcp_server|tests|bench)/[\w/.\-]*\w)(?:::(\w+…?))?", text):
            target = REPO / name
            if not target.exists():
                missing.append(f"{path.name}: {name}")
                continue
            whole = "" if test.endswith("…") else r"\("  # a name cut short with … is checked up to the cut
            defined = not test or re.search(rf"\bdef {test.rstrip('…')}{whole}", target.read_text(encoding="utf-8"))
            if not defined:
                missing.append(f"{path.name}: {name}{'::' + test if test else ''}")
    assert missing == []


def test_every_mcp_tool_is_explained_in_the_tools_guide():
    guide = (DOCS / "tools.md").read_text(encoding="utf-8")
    assert [name for name in reference.documented_names()["tools.md"] if name not in guide] == []


def test_the_readme_stays_short_and_points_into_docs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "<!-- main-command -->" in readme and "<!-- test-command -->" in readme
    for page in ("docs/reference/cli.md", "docs/reference/tools.md", "docs/reference/config.md"):
        assert f"({page})" in readme, f"README does not link {page}"


def heading_anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: the text lower-cased, punctuation dropped, each space a hyphen,
    a repeated one numbered."""
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        text = line.lstrip("#").strip().replace("`", "").replace("**", "")
        anchor = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        seen[anchor] = seen.get(anchor, -1) + 1
    return {anchor if n == 0 else f"{anchor}-{n}" for anchor, count in seen.items() for n in range(count + 1)}


@pytest.mark.parametrize("page", [REPO / "README.md", *BENCH, *GUIDES, *sorted((DOCS / "reference").glob("*.md"))],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_in_the_docs_reaches_a_file_and_the_section_it_names(page: Path):
    """bench/README.md's figures link to the sections under bench/results/ that measured them; a section renamed or
    moved must not leave the link pointing at the top of a 1,500-line file."""
    text = page.read_text(encoding="utf-8")
    broken = []
    for target, fragment in LINK.findall(text) + REFERENCE.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        path = page.parent / target if target else page
        if not path.exists() or (fragment and path.suffix == ".md" and fragment[1:] not in heading_anchors(path)):
            broken.append(target + fragment)
    assert broken == []


def test_the_bench_readme_names_every_script_in_bench():
    readme = (REPO / "bench" / "README.md").read_text(encoding="utf-8")
    scripts = sorted(path.relative_to(REPO / "bench").as_posix() for path in (REPO / "bench").rglob("*.py"))
    assert [script for script in scripts if f"`{script}`" not in readme] == []


def test_every_environment_variable_memdir_reads_is_documented():
    code = "\n".join(path.read_text(encoding="utf-8") for layer in ("vault", "indexer", "mcp_server")
                     for path in (REPO / layer).rglob("*.py"))
    docs = "\n".join(path.read_text(encoding="utf-8") for path in [REPO / "README.md", *GUIDES])
    assert sorted(name for name in set(re.findall(r"\bMEMDIR_[A-Z_]+\b", code)) if name not in docs) == []
