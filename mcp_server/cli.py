"""The `memdir` command line. Each command parses, calls one library function and formats the result."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

import click

from vault import Vault, VaultError, init_vault, normalize

from . import render
from .config import Config, default_config_text, load_config
from .lookup import lookup

if TYPE_CHECKING:
    from .app import App

F = TypeVar("F", bound=Callable[..., Any])


def vault_option(function: F) -> F:
    return click.option(
        "--vault",
        "vault_path",
        envvar="MEMDIR_VAULT",
        default=".memories",
        show_default="$MEMDIR_VAULT or ./.memories",
        type=click.Path(file_okay=False, path_type=Path),
        help="The vault folder.",
    )(function)


class Context:
    """What a command needs: the vault and its config, read once."""

    def __init__(self, vault_path: Path) -> None:
        root = vault_path.expanduser().absolute()
        if not root.is_dir():
            raise click.ClickException(f"no vault at {root}; create one with: memdir init {vault_path}")
        self.config: Config = load_config(root)
        self.vault = Vault(root, self.config.vault)


def open_vault(vault_path: Path) -> Context:
    try:
        return Context(vault_path)
    except VaultError as exc:
        raise click.ClickException(str(exc)) from None


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


class MemdirGroup(click.Group):
    """Turns memdir's own errors into one clean line and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except VaultError as exc:
            raise click.ClickException(str(exc)) from None


@click.group(cls=MemdirGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memdir")
def cli() -> None:
    """memdir: persistent memory for AI coding assistants, kept as Markdown files."""


@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@vault_option
def init(path: Path | None, vault_path: Path) -> None:
    """Create a vault (folders, .gitignore, memdir.toml); safe to run again."""
    root = (path or vault_path).expanduser().absolute()
    created = init_vault(root, default_config_text())
    load_config(root)  # an existing memdir.toml must still be valid
    if created:
        click.echo(f"initialized {root}: created " + ", ".join(created))
    else:
        click.echo(f"{root} is already a memdir vault; nothing to do")


@cli.command()
@click.argument("content")
@click.option("--title", help="Title (default: the first line of the content).")
@click.option("--type", "memory_type", help="preference, fact, decision, constraint, learning, ...")
@click.option("--collection", default="memory_bank", show_default=True, help="Where the memory lives.")
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for more.")
@vault_option
def add(content: str, title: str | None, memory_type: str | None, collection: str, tags: tuple[str, ...],
        vault_path: Path) -> None:
    """Write a new memory and print its id (an exact re-statement returns the existing one)."""
    with open_app(vault_path) as app:
        added = app.curator.add(content, title=title, type=memory_type, collection=collection, tags=tags)
    click.echo(added.memory.id)
    for line in render.added_notes(added):
        click.echo(line, err=True)


@cli.command()
@click.argument("pairs", nargs=-1, required=True, metavar="ID OUTCOME [ID OUTCOME ...]")
@vault_option
def score(pairs: tuple[str, ...], vault_path: Path) -> None:
    """Record outcomes (worked, partial, failed, unknown) for memories; only their counters change."""
    if len(pairs) % 2:
        raise click.UsageError("give pairs: ID OUTCOME [ID OUTCOME ...]")
    outcomes = dict(zip(pairs[::2], pairs[1::2]))
    with open_app(vault_path) as app:
        results = app.curator.score(outcomes)
    click.echo(render.scored(results))


@cli.command()
@click.option("--dry-run", is_flag=True, help="Show what would happen; change nothing.")
@vault_option
def gc(dry_run: bool, vault_path: Path) -> None:
    """Apply the lifecycle: promote, demote and expire memories (logged to .memdir/lifecycle.jsonl)."""
    with open_app(vault_path) as app:
        applied = app.curator.gc(dry_run=dry_run)
    click.echo(render.lifecycle(applied, dry_run))


@cli.command(name="suggest-merges")
@click.option("--threshold", type=float, help="Cosine similarity that makes two memories candidates (default 0.85).")
@click.option("--type", "memory_type", help="Only memories of this type.")
@click.option("--limit", type=int, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@vault_option
def suggest_merges(threshold: float | None, memory_type: str | None, limit: int, as_json: bool, vault_path: Path) -> None:
    """List groups of near-duplicate memories (nothing is merged automatically)."""
    with open_app(vault_path) as app:
        clusters = app.curator.suggest_merges(threshold, memory_type, limit)
    if as_json:
        emit_json([{"ids": list(c.ids), "titles": list(c.titles), "similarity": c.similarity} for c in clusters])
    else:
        click.echo(render.clusters(clusters))


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--into", "title", required=True, help="Title of the merged memory.")
@click.option("--content", help="Body of the merged memory (default: the sources' bodies, joined).")
@vault_option
def merge(ids: tuple[str, ...], title: str, content: str | None, vault_path: Path) -> None:
    """Merge memories into one that supersedes them; the sources move to .trash/."""
    with open_app(vault_path) as app:
        merged = app.curator.merge(ids, title, content)
    click.echo(f"{merged.id}  {merged.path}  (supersedes {', '.join(ids)}; sources moved to .trash/)")


@cli.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the normalized memory as JSON.")
@vault_option
def show(ref: str, as_json: bool, vault_path: Path) -> None:
    """Print one memory, given its id or its path inside the vault."""
    ctx = open_vault(vault_path)
    shape = normalize(lookup(ctx.vault, ref))
    emit_json(shape) if as_json else click.echo(render.memory_detail(shape))


@cli.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of normalized memories.")
@vault_option
def list_(as_json: bool, vault_path: Path) -> None:
    """List every memory in the vault."""
    ctx = open_vault(vault_path)
    shapes = [normalize(m) for m in ctx.vault.scan().memories]
    emit_json(shapes) if as_json else click.echo(render.memory_rows(shapes))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"memories": N, "errors": [...]}.')
@vault_option
def doctor(as_json: bool, vault_path: Path) -> None:
    """Check every file; exit status 1 when any file has a problem."""
    ctx = open_vault(vault_path)
    scan = ctx.vault.scan()
    errors = [p.as_dict() for p in scan.problems]
    if as_json:
        emit_json({"memories": len(scan.memories), "errors": errors})
    else:
        if errors:
            click.echo(render.problems(errors))
        click.echo(f"{len(scan.memories)} memories, {len(errors)} problem{'s' if len(errors) != 1 else ''}")
    if errors:
        sys.exit(1)


@cli.command()
@vault_option
def reindex(vault_path: Path) -> None:
    """Rebuild every index from the files (into a new generation, swapped in whole)."""
    from indexer.embed import make_embedder
    from indexer.index import rebuild

    ctx = open_vault(vault_path)
    with progress_bar("indexing") as progress:
        report = rebuild(ctx.vault, make_embedder(ctx.config.search.embedder), progress)
    click.echo(
        f"indexed {report.memories} memories ({report.chunks} chunks) in {report.seconds:.1f} s; "
        f"{report.embedded} texts embedded, {report.problems} problem file{'s' if report.problems != 1 else ''}"
    )


@cli.command()
@click.argument("query", required=False)
@click.option("--limit", type=int, help="How many results (default 10).")
@click.option("--days-back", type=float, help="Only memories created in the last N days.")
@click.option("--collection", "collections", multiple=True, help="Only this collection; repeat for more.")
@click.option("--type", "types", multiple=True, help="Only this type; repeat for more.")
@click.option("--tag", "tags", multiple=True, help="Only memories with this tag; repeat for more.")
@click.option("--sort-by", type=click.Choice(["relevance", "recency", "score"]), default="relevance")
@click.option("--all", "include_superseded", is_flag=True, help="Include superseded and archived memories.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of results.")
@vault_option
def search(query: str | None, limit: int | None, days_back: float | None, collections: tuple[str, ...],
           types: tuple[str, ...], tags: tuple[str, ...], sort_by: str, include_superseded: bool, as_json: bool,
           vault_path: Path) -> None:
    """Hybrid search (meaning + keywords + links); without QUERY, --days-back lists a timeline."""
    from indexer.search import SearchRequest, hit_shape

    request = SearchRequest(query=query, limit=limit, collections=collections, types=types, tags=tags,
                            days_back=days_back, sort_by=sort_by, include_superseded=include_superseded)  # type: ignore[arg-type]
    with open_app(vault_path) as app:
        results = [hit_shape(hit) for hit in app.searcher.search(request)]
    emit_json(results) if as_json else click.echo(render.search_results(results))


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@vault_option
def links(memory_id: str, as_json: bool, vault_path: Path) -> None:
    """Show a memory's relations: links out, backlinks, its supersedes chain and ghost targets."""
    from indexer.relations import relations_of

    with open_app(vault_path) as app:
        report = relations_of(app.index, memory_id)
    emit_json(report) if as_json else click.echo(render.relations(report))


@contextmanager
def open_app(vault_path: Path) -> Iterator["App"]:
    """The vault with its index (built on first use, with a progress bar)."""
    from .app import App

    ctx = open_vault(vault_path)
    with progress_bar("indexing") as progress:
        app = App(ctx.vault.root, config=ctx.config, progress=progress)
    try:
        yield app
    finally:
        app.close()


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr (stdout stays clean for --json); silent when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                  transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(label, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="memdir")

