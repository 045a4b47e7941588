"""The `memdir` command line. Each command parses, calls one service operation and formats the result.

When this user's server serves the vault, commands go through it (one writer, one view); otherwise
they open the vault in-process. Hooks take a fast path that never imports click or models.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar, get_args

import click

from vault import Memory, NotFoundError, Vault, VaultError, gitmerge, init_vault

from ..service import checks
from ..service import operations as ops
from .. import client
from ..clients import integrations, opencode_wiring
from ..views import render
from ..config import Config, default_config_text, load_config, user_vault_root
from ..clients.claude_wiring import check_claude_code
from ..clients.codex_wiring import check_codex
from ..clients.gemini_wiring import check_gemini
from ..locate import locate
from ..service.lookup import lookup
from ..views.results import DoctorResult
from ..views.view import view_of

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


def vault_root(vault_path: Path) -> Path:
    root = locate(vault_path, Path.cwd()).absolute()  # a relative vault is found from a subfolder too
    if not root.is_dir():
        raise click.ClickException(f"no vault at {root}; create one with: memdir init {vault_path}")
    return root


def local_vault(vault_path: Path) -> tuple[Vault, Config]:
    root = vault_root(vault_path)
    config = load_config(root)
    return Vault(root, config.vault), config


def local_vaults(vault_path: Path) -> list[Vault]:
    """The project vault and, when it exists, the user vault (read-only use: no index, no model)."""
    project, config = local_vault(vault_path)
    user_root = user_vault_root(config, project.root)
    if user_root is None or not (user_root / "memdir.toml").is_file():
        return [project]
    return [project, Vault(user_root, load_config(user_root).vault, source="user")]


def lookup_anywhere(vault_path: Path, ref: str) -> Memory:
    """A memory by path (in the project vault) or by id (in whichever vault holds it)."""
    project, *others = local_vaults(vault_path)
    try:
        return lookup(project, ref)
    except NotFoundError:
        for vault in others:
            try:
                return lookup(vault, ref)
            except NotFoundError:
                continue
        raise


def emit_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


class Remote:
    """The running server's `Operations`: each request model posted over HTTP with the server's token, its
    answer read back into the operation's result type. memdir's errors are raised again as the same
    VaultError subclass, so `except NotFoundError` works remotely as it does locally."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def run(self, request: ops.Op[ops.R]) -> ops.R:
        try:
            return request.result_of(client.call(self.root, request.op, request.wire()))
        except client.RemoteError as exc:
            raise as_local(exc) from None
        except client.Unavailable as exc:
            raise click.ClickException(f"{exc}; run the command again to use the vault directly") from None


def as_local(exc: client.RemoteError) -> Exception:
    """The server's error as the VaultError subclass it named (a server bug stays a plain error)."""
    from vault import errors

    kind = getattr(errors, exc.kind, None)
    if isinstance(kind, type) and issubclass(kind, VaultError):
        local = kind.__new__(kind)
        Exception.__init__(local, str(exc))  # ParseError's and SecretError's fields stay on the server
        return local
    return click.ClickException(str(exc))


@contextmanager
def service(vault_path: Path) -> Iterator[ops.Operations]:
    """The running server if there is one, else the vault opened in this process."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        yield Remote(root)
        return
    from ..service.app import App
    from ..service.memory_service import MemoryService

    config = load_config(root)
    with progress_bar("indexing") as progress:
        app = App(root, config=config, progress=progress)
    try:
        yield MemoryService(app)
    finally:
        app.close()


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[str, int, int], None]]:
    """A rich progress bar on stderr (stdout stays clean for --json), named by the stage it counts ("indexing:
    reading", then "indexing: embedding"); silent when stderr is not a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as progress:
        task = progress.add_task(label, total=None)
        yield lambda stage, done, total: progress.update(task, description=f"{label}: {stage}", completed=done,
                                                         total=total)


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


# -- the vault ---------------------------------------------------------------------------

@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--claude-code", is_flag=True, help="Also register hooks, MCP server and tool permissions with Claude Code.")
@click.option("--client", "clients", multiple=True, type=click.Choice(integrations.WIRED),
              help="Register memdir's MCP server and per-turn hooks with this assistant (repeatable).")
@click.option("--scope", type=click.Choice(["project", "user"]), default="project", show_default=True,
              help="project: .claude/settings.local.json, permissions in .claude/settings.json, the server in ~/.claude.json; "
                   "user: ~/.claude/settings.json and ~/.claude.json.")
@click.option("--print-config", "print_config", type=click.Choice(integrations.CLIENTS),
              help="Print the MCP snippet for another assistant and change nothing.")
@vault_option
def init(path: Path | None, claude_code: bool, clients: tuple[str, ...], scope: str, print_config: str | None,
         vault_path: Path) -> None:
    """Create a vault (folders, .gitignore, memdir.toml); safe to run again."""
    root = (path or vault_path).expanduser().absolute()
    if print_config:
        click.echo(integrations.client_config(print_config, root))
        return
    created = init_vault(root, default_config_text())
    load_config(root)  # an existing memdir.toml must still be valid
    created += gitmerge.register(root, merge_driver_command())  # git config is not cloned: once per clone
    if created:
        click.echo(f"initialized {root}: created " + ", ".join(created))
    else:
        click.echo(f"{root} is already a memdir vault; nothing to do")
    if "gemini" in clients:
        _register_gemini(root)
    if "codex" in clients:
        _register_codex(root)
    if "opencode" in clients:
        _register_opencode(root)
    if claude_code or "claude-code" in clients:
        registration = integrations.register_claude_code(root, scope, project=Path.cwd())
        for path_ in registration.files():
            state = "updated" if path_ in registration.changed else "already up to date"
            click.echo(f"Claude Code: {path_} {state}")
        for path_ in registration.removed:
            git_note = "; git tracks it: commit the deletion" if path_ in registration.removed_from_git else ""
            click.echo(f"Claude Code: {path_} removed (it held only what an earlier memdir release put there{git_note})")
        click.echo(integrations.TRUST_NOTE.format(project=Path.cwd()))


def _register_gemini(root: Path) -> None:
    registration = integrations.register_gemini(root, project=Path.cwd())
    state = "updated" if registration.changed else "already up to date"
    click.echo(f"Gemini CLI: {registration.settings} {state}")
    if shutil.which("gemini") is None:
        click.echo("Gemini CLI: `gemini` was not found on PATH; the settings are written for when it is installed "
                   "(npm install -g @google/gemini-cli)")
    click.echo(integrations.GEMINI_TRUST_NOTE.format(project=Path.cwd()))


def _register_codex(root: Path) -> None:
    _report_files("Codex", integrations.register_codex(root, project=Path.cwd()), "codex", "@openai/codex",
                  integrations.CODEX_TRUST_NOTE)


def _register_opencode(root: Path) -> None:
    _report_files("OpenCode", opencode_wiring.register_opencode(root, project=Path.cwd()), "opencode", "opencode-ai",
                  opencode_wiring.NOTE)


def _report_files(label: str, registration: integrations.Registration, binary: str, package: str, note: str) -> None:
    """Each file a client registration wrote, whether the client is installed, and what to do next."""
    for path_ in (registration.servers, registration.settings):
        click.echo(f"{label}: {path_} {'updated' if path_ in registration.changed else 'already up to date'}")
    if shutil.which(binary) is None:
        click.echo(f"{label}: `{binary}` was not found on PATH; the config is written for when it is installed "
                   f"(npm install -g {package})")
    click.echo(note.format(project=Path.cwd()))


@cli.command()
@click.argument("content")
@click.option("--title", help="Title (default: the first line of the content).")
@click.option("--type", "memory_type", help="preference, fact, decision, constraint, learning, ...")
@click.option("--collection", default="memory_bank", show_default=True, help="Where the memory lives.")
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for more.")
@click.option("--allow-secret", is_flag=True, help="Store it even if it looks like an API key, token or password.")
@click.option("--private", is_flag=True, help="Keep it in your user vault, never in the project vault.")
@vault_option
def add(content: str, title: str | None, memory_type: str | None, collection: str, tags: tuple[str, ...],
        allow_secret: bool, private: bool, vault_path: Path) -> None:
    """Write a new memory and print its id (an exact re-statement returns the existing one)."""
    with service(vault_path) as svc:
        added = svc.run(ops.Add(content=content, title=title, type=memory_type, collection=collection, tags=list(tags),
                                allow_secret=allow_secret, privacy="private" if private else "shared"))
    click.echo(added.memory.id)
    for line in render.added_notes(added):
        click.echo(line, err=True)


@cli.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the normalized memory as JSON.")
@click.option("--version", "version", metavar="DATE|COMMIT", help="The memory as committed then (a vault under git).")
@vault_option
def show(ref: str, as_json: bool, version: str | None, vault_path: Path) -> None:
    """Print one memory, given its id or its path inside the vault."""
    root = vault_root(vault_path)
    if version:
        with service(vault_path) as svc:
            view = svc.run(ops.Read(ref=ref, version=version))
    elif client.serving(root) is not None:
        view = Remote(root).run(ops.Read(ref=ref))
    else:
        memory = lookup_anywhere(vault_path, ref)
        view = view_of(memory, stale=local_vault(vault_path)[0].stale(memory))
    emit_json(view.as_json()) if as_json else click.echo(render.memory_detail(view))


@cli.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of normalized memories.")
@vault_option
def list_(as_json: bool, vault_path: Path) -> None:
    """List every memory in the vault."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        listed = Remote(root).run(ops.List())
    else:
        listed = [view_of(m) for vault in local_vaults(vault_path) for m in vault.scan().memories]
    emit_json([view.as_json() for view in listed]) if as_json else click.echo(render.memory_rows(listed))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"memories": N, "errors": [...]}.')
@vault_option
def doctor(as_json: bool, vault_path: Path) -> None:
    """Check every file; exit status 1 when any file has a problem."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        found = Remote(root).run(ops.Doctor())
    else:
        vault, _ = local_vault(vault_path)
        scan = vault.scan()
        problems = [*scan.problems, *vault.anchor_problems(scan.memories)]
        found = DoctorResult(memories=len(scan.memories), errors=[p.as_dict() for p in problems],
                             warnings=checks.warnings(scan.memories, root))
    wiring = check_claude_code(project=root.parent, home=Path.home())  # the CLI's own HOME: the server's may differ
    gemini = check_gemini(project=root.parent, home=Path.home())
    codex = check_codex(project=root.parent, home=Path.home())
    opencode = opencode_wiring.check_opencode(project=root.parent)
    report = {**ops.as_json(found), "claude_code": [finding.as_dict() for finding in wiring],
              "gemini": [finding.as_dict() for finding in gemini], "codex": [finding.as_dict() for finding in codex],
              "opencode": [finding.as_dict() for finding in opencode]}
    if as_json:
        emit_json(report)
    else:
        if report["errors"]:
            click.echo(render.problems(report["errors"]))
        if report.get("warnings"):
            click.echo(render.problems(report["warnings"], "warning: "))
        for finding in wiring:
            click.echo(f"Claude Code {'ok' if finding.ok else 'MISSING'}: {finding.detail}")
        for name, findings in (("Gemini CLI", gemini), ("Codex", codex), ("OpenCode", opencode)):
            for finding in findings:
                click.echo(f"{name} {'ok' if finding.ok else 'MISSING'}: {finding.detail}")
        count = len(report["errors"])
        click.echo(f"{report['memories']} memories, {count} problem{'s' if count != 1 else ''}")
    if report["errors"]:
        sys.exit(1)


def merge_driver_command() -> str:
    """The driver git runs, by absolute path: git may run it from a GUI or a hook with another PATH."""
    script = Path(sys.executable).with_name("memdir")
    program = shlex.quote(str(script)) if script.exists() else f"{shlex.quote(sys.executable)} -m mcp_server"
    return f"{program} merge-driver %O %A %B %P"


@cli.command(name="merge-driver")
@click.argument("base", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("path", required=False)
def merge_driver(base: Path, ours: Path, theirs: Path, path: str | None) -> None:
    """Git merge driver for memories (%O %A %B %P): counters add up; exit 1 when a conflict remains."""
    history = gitmerge.DEFAULT_HISTORY
    vault = gitmerge.vault_of(Path(path)) if path else None
    if vault is not None:
        try:
            history = load_config(vault).vault.outcome_history
        except VaultError:
            pass  # a broken memdir.toml must not stop a merge; the default cap is safe
    result = gitmerge.merge_files(base, ours, theirs, label=path, history=history)
    for conflict in result.conflicts:
        click.echo(f"CONFLICT (memdir): {conflict}", err=True)
    sys.exit(0 if result.clean else 1)


# -- the index -------------------------------------------------------------------------------

@cli.command()
@vault_option
def reindex(vault_path: Path) -> None:
    """Rebuild every index from the files (into a new generation, swapped in whole)."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        report = Remote(root).run(ops.Reindex())
        click.echo(f"indexed {report.memories} memories ({report.chunks} chunks) in {report.seconds:.1f} s "
                   f"by the running server; {report.problems} problem files")
        return
    from indexer.embed import make_embedder
    from indexer.rebuild import rebuild

    vault, config = local_vault(vault_path)
    with progress_bar("indexing") as progress:
        result = rebuild(vault, make_embedder(config.search.embedder), progress)
    click.echo(
        f"indexed {result.memories} memories ({result.chunks} chunks) in {result.seconds:.1f} s; "
        f"{result.embedded} texts embedded, {result.problems} problem file{'s' if result.problems != 1 else ''}"
    )


@cli.command()
@click.argument("query", required=False)
@click.option("--limit", type=int, help="How many results (default 10).")
@click.option("--days-back", type=float, help="Only memories created in the last N days.")
@click.option("--collection", "collections", multiple=True, help="Only this collection; repeat for more.")
@click.option("--type", "types", multiple=True, help="Only this type; repeat for more.")
@click.option("--tag", "tags", multiple=True, help="Only memories with this tag; repeat for more.")
@click.option("--sort-by", type=click.Choice(get_args(ops.SortBy)), default="relevance")
@click.option("--all", "include_superseded", is_flag=True, help="Include superseded and archived memories.")
@click.option("--after", metavar="DATE", help="Only memories created on or after (file mtime when they have no created_at).")
@click.option("--before", metavar="DATE", help="Only memories created before (file mtime when they have no created_at).")
@click.option("--as-of", "as_of", metavar="DATE|COMMIT",
              help="Answer from the vault as git had it then (YYYY-MM-DD: the last commit that day).")
@click.option("--json", "as_json", is_flag=True, help='Print {"results": [...]} as JSON, with "window" or "as_of" when a time window or a past commit shaped them.')
@vault_option
def search(query: str | None, limit: int | None, days_back: float | None, collections: tuple[str, ...],
           types: tuple[str, ...], tags: tuple[str, ...], sort_by: str, include_superseded: bool, after: str | None,
           before: str | None, as_of: str | None, as_json: bool, vault_path: Path) -> None:
    """Hybrid search (meaning + keywords + links); without QUERY, --days-back, --after or --before list a timeline."""
    with service(vault_path) as svc:
        found = svc.run(ops.Search(query=query, days_back=days_back, collections=list(collections), types=list(types),
                                   tags=list(tags), sort_by=sort_by, limit=limit, include_superseded=include_superseded,
                                   after=after, before=before, as_of=as_of))
    if as_json:  # one shape for scripts and the model: {"results": [...]} and what shaped it, when anything did
        emit_json(ops.as_json(found))
    else:
        click.echo((render.as_of(found.as_of) if as_of and found.as_of else "") + render.window(found.window)
                   + render.search_results(found.results))


@cli.command()
@click.argument("ref")
@click.option("--json", "as_json", is_flag=True, help="Print the versions as JSON.")
@vault_option
def log(ref: str, as_json: bool, vault_path: Path) -> None:
    """A memory's committed versions, newest first: commit, date, author and what changed."""
    with service(vault_path) as svc:
        report = svc.run(ops.Log(ref=ref))
    emit_json(ops.as_json(report)) if as_json else click.echo(render.memory_log(report))


@cli.command()
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@vault_option
def links(memory_id: str, as_json: bool, vault_path: Path) -> None:
    """Show a memory's relations: links out, backlinks, its supersedes chain and ghost targets."""
    with service(vault_path) as svc:
        report = svc.run(ops.Relationships(memory_id=memory_id))
    emit_json(ops.as_json(report)) if as_json else click.echo(render.relations(report))


@cli.command()
@click.argument("source")
@click.argument("target")
@click.option("--as", "relation", type=click.Choice(get_args(ops.Linkable)),
              default="depends_on", show_default=True, help="How SOURCE relates to TARGET.")
@click.option("--json", "as_json", is_flag=True, help="Print SOURCE's relations as JSON.")
@vault_option
def link(source: str, target: str, relation: str, as_json: bool, vault_path: Path) -> None:
    """Record a typed relation from SOURCE to TARGET in SOURCE's frontmatter (both are memory ids)."""
    with service(vault_path) as svc:
        report = svc.run(ops.Link(source=source, target=target, relation=relation))
    emit_json(ops.as_json(report)) if as_json else click.echo(
        ("" if report.changed else "already recorded; nothing changed\n") + render.relations(report))


# -- outcome learning -------------------------------------------------------------------------

@cli.command()
@click.argument("pairs", nargs=-1, required=True, metavar="ID OUTCOME [ID OUTCOME ...]")
@vault_option
def score(pairs: tuple[str, ...], vault_path: Path) -> None:
    """Record outcomes (worked, partial, failed, unknown) for memories; only their counters change."""
    if len(pairs) % 2:
        raise click.UsageError("give pairs: ID OUTCOME [ID OUTCOME ...]")
    with service(vault_path) as svc:
        result = svc.run(ops.Score(memory_scores=dict(zip(pairs[::2], pairs[1::2]))))
    click.echo(render.score_answer(result))


@cli.command()
@click.option("--dry-run", is_flag=True, help="Show what would happen; change nothing.")
@vault_option
def gc(dry_run: bool, vault_path: Path) -> None:
    """Apply the lifecycle: promote, demote and expire memories (logged to .memdir/lifecycle.jsonl)."""
    with service(vault_path) as svc:
        decisions = svc.run(ops.Gc(dry_run=dry_run))
    click.echo(render.lifecycle(decisions, dry_run))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
@vault_option
def stats(as_json: bool, vault_path: Path) -> None:
    """Count the vault's memories by collection and type, scored, superseded and problem files."""
    with service(vault_path) as svc:
        report = svc.run(ops.Stats())
    emit_json(ops.as_json(report)) if as_json else click.echo(render.stats(report))


@cli.command()
@click.argument("memory_id")
@vault_option
def delete(memory_id: str, vault_path: Path) -> None:
    """Move a memory's file to .trash/ (`memdir restore ID` brings it back)."""
    with service(vault_path) as svc:
        deleted = svc.run(ops.Delete(memory_id=memory_id))
    click.echo(render.deleted(deleted))


@cli.command()
@click.argument("memory_ids", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help='Print {"verified": [{id, title, anchors, was_stale}]}.')
@vault_option
def verify(memory_ids: tuple[str, ...], as_json: bool, vault_path: Path) -> None:
    """Confirm memories still hold: anchor them to the project files they cite as those are now."""
    with service(vault_path) as svc:
        report = svc.run(ops.Verify(ids=list(memory_ids)))
    emit_json(ops.as_json(report)) if as_json else click.echo(render.verified(report))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"items": [{kind, ids, reason, action, key}]}.')
@click.option("--dismiss", "keys", multiple=True, help="Hide an item (by its key) until what it is about changes.")
@vault_option
def review(as_json: bool, keys: tuple[str, ...], vault_path: Path) -> None:
    """What needs a human decision: stale, duplicate, contradicting, expiring, invalid or suspicious memories."""
    with service(vault_path) as svc:
        report = svc.run(ops.Review(dismiss=list(keys)))
    emit_json(ops.as_json(report)) if as_json else click.echo(render.review_items(report))


@cli.command()
@click.argument("memory_id")
@vault_option
def restore(memory_id: str, vault_path: Path) -> None:
    """Put a deleted memory back from .trash/ where it was; refuses if its id or place is taken."""
    with service(vault_path) as svc:
        restored = svc.run(ops.Restore(memory_id=memory_id))
    click.echo(render.restored(restored))


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--title", help="Title of the book (default: the document's own title or file name).")
@click.option("--tag", "tags", multiple=True, help="Tag the books (repeatable).")
@click.option("--dry-run", is_flag=True, help="Say what would be created or updated; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file.")
@vault_option
def ingest(paths: tuple[Path, ...], title: str | None, tags: tuple[str, ...], dry_run: bool, as_json: bool,
           vault_path: Path) -> None:
    """Bring PDF, HTML, text and Markdown documents (or folders of them) into books/."""
    with service(vault_path) as svc:
        results = svc.run(ops.Ingest(paths=[str(p.resolve()) for p in paths], title=title, tags=list(tags), dry_run=dry_run))
    emit_json(ops.as_json(results)) if as_json else click.echo(render.ingested(results))
    if any(r.status == "error" for r in results):
        sys.exit(1)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the books as JSON.")
@vault_option
def books(as_json: bool, vault_path: Path) -> None:
    """List the books: ingested documents and hand-written references (remove one with `memdir delete ID`)."""
    with service(vault_path) as svc:
        listed = svc.run(ops.Books())
    emit_json(ops.as_json(listed)) if as_json else click.echo(render.books(listed))


@cli.command(name="suggest-merges")
@click.option("--threshold", type=float, help="Cosine similarity that makes two memories candidates (default 0.85).")
@click.option("--type", "memory_type", help="Only memories of this type.")
@click.option("--limit", type=int, default=10, show_default=True)
@click.option("--json", "as_json", is_flag=True)
@vault_option
def suggest_merges(threshold: float | None, memory_type: str | None, limit: int, as_json: bool, vault_path: Path) -> None:
    """List groups of near-duplicate memories (nothing is merged automatically)."""
    with service(vault_path) as svc:
        clusters = svc.run(ops.SuggestMerges(threshold=threshold, type=memory_type, limit=limit))
    emit_json(ops.as_json(clusters)) if as_json else click.echo(render.clusters(clusters))


@cli.command()
@click.argument("ids", nargs=-1, required=True)
@click.option("--into", "title", required=True, help="Title of the merged memory.")
@click.option("--content", help="Body of the merged memory (default: the sources' bodies, joined).")
@click.option("--allow-secret", is_flag=True, help="Merge even if the text looks like an API key, token or password.")
@vault_option
def merge(ids: tuple[str, ...], title: str, content: str | None, allow_secret: bool, vault_path: Path) -> None:
    """Merge memories into one that supersedes them; the sources move to .trash/."""
    with service(vault_path) as svc:
        merged = svc.run(ops.Merge(ids=list(ids), title=title, content=content, allow_secret=allow_secret))
    click.echo(f"{merged.id}  {merged.path}  (supersedes {', '.join(ids)}; sources moved to .trash/)")


# -- the server and assistants -------------------------------------------------------------

@cli.command()
@vault_option
def serve(vault_path: Path) -> None:
    """Run this user's memdir server in the foreground, serving this vault at once and any other vault asked for."""
    from ..logs import configure_file
    from ..server.process import AlreadyRunning, run_server

    root = vault_root(vault_path)
    client.own_folder()
    configure_file(client.log_file())
    try:
        run_server(root, ready=lambda info: click.echo(
            f"memdir server on 127.0.0.1:{info.port} (pid {info.pid}), opening {root}; address in {client.servers_folder()}",
            err=True))
    except AlreadyRunning as exc:
        if exc.info is None:
            raise click.ClickException("a memdir server is starting for this user; run the command again") from None
        client.ensure(root)  # the running server opens this vault
        click.echo(f"a memdir server is already running for this user (pid {exc.info.pid}, port {exc.info.port}); "
                   f"it now serves {root}; not starting another", err=True)


@cli.command()
@click.option("--no-browser", is_flag=True, help="Print the login URL instead of opening the browser.")
@vault_option
def ui(no_browser: bool, vault_path: Path) -> None:
    """Open this vault's pages (review inbox, memories, turns, search, vault) in the browser, served by this
    user's memdir server on 127.0.0.1; the URL holds a one-time login code, good for one minute."""
    root = vault_root(vault_path)
    info = client.ensure(root)
    code = client.request(info, "POST", "/api/ui/code", {}, vault=root)["code"]
    url = f"http://127.0.0.1:{info.port}/ui/login?code={code}"
    if no_browser:
        click.echo(url)
        return
    import webbrowser

    if not webbrowser.open(url):
        click.echo(url)
    click.echo(f"opened the memdir pages of {root} in the browser", err=True)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the servers as JSON.")
def status(as_json: bool) -> None:
    """What memdir runs for this user: each served vault's path, the server's pid, port and memory, the vault's
    uptime, memories and idle time, and the embedding host."""
    from ..server import registry

    served = [vars(s) for s in registry.servers()]
    if as_json:
        emit_json(served)
        return
    click.echo(render.servers(served))
    if any(s["kind"] == "vault" for s in served):
        click.echo("(MB: the resident memory of the process, shared by the vaults it serves)")


@cli.command()
@click.option("--all", "every", is_flag=True, help="Stop this user's memdir server (every vault) and the embedding host.")
@vault_option
def stop(every: bool, vault_path: Path) -> None:
    """Close one vault in the server (the server stays for the others), or --all: end the server and the
    embedding host. Both cleanly; the next hook or tool call starts what it needs again."""
    from ..server import registry

    if every:
        stopped = registry.stop()
        click.echo("\n".join(f"stopped pid {s.pid} ({s.vault})" for s in stopped) or "no memdir server was running")
        return
    root = locate(vault_path, Path.cwd()).absolute()
    closed = registry.close(root)
    click.echo(f"closed {root} (pid {closed.pid})" if closed else f"no memdir server serves {root}")


@cli.command()
@vault_option
def mcp(vault_path: Path) -> None:
    """The MCP server an assistant launches over stdio (starts this user's server, and opens the vault there, if needed)."""
    from ..tools.stdio import run_stdio

    run_stdio(vault_root(vault_path))


def main() -> None:
    cli(prog_name="memdir")
