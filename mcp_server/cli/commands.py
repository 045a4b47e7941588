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
from typing import Any, Callable, Iterator, TypeVar

import click

from vault import Memory, NotFoundError, Vault, VaultError, gitmerge, init_vault

from ..service import checks
from ..service import operations as ops
from .. import client
from .options import ARGUMENT, Opt, operation
from ..clients import integrations, opencode_wiring
from ..views import render
from ..config import Config, default_config_text, load_config, user_vault_root
from ..clients.claude_wiring import check_claude_code
from ..clients.codex_wiring import check_codex
from ..clients.gemini_wiring import check_gemini
from ..locate import locate, uninitialized
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
        show_default="$MEMDIR_VAULT or .memories; a relative one is looked up here, then in each parent",
        type=click.Path(file_okay=False, path_type=Path),
        help="The vault folder.",
    )(function)


def vault_root(vault_path: Path) -> Path:
    root = locate(vault_path, Path.cwd()).absolute()  # a relative vault is found from a subfolder too
    refused = uninitialized(root)
    if refused is not None:
        raise click.ClickException(refused)
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
        app = App(root, config=config, progress=progress, read_when_full=True)
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
        click.echo(integrations.TRUST_NOTE.format(project=Path.cwd(), scope=integrations.SCOPE_NOTES[scope]))


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
@operation(ops.Add, content=ARGUMENT, tags=Opt("--tag"), privacy=Opt("--private", flag_value="private"))
@vault_option
def add(request: ops.Add, vault_path: Path) -> None:
    """Write a new memory and print its id (the same text with the same type returns the existing one)."""
    with service(vault_path) as svc:
        added = svc.run(request)
    click.echo(added.memory.id)
    for line in render.added_notes(added):
        click.echo(line, err=True)


@cli.command()
@operation(ops.Read, ref=ARGUMENT, version=Opt(metavar="DATE|COMMIT"))
@click.option("--json", "as_json", is_flag=True, help="Print the normalized memory as JSON.")
@vault_option
def show(request: ops.Read, as_json: bool, vault_path: Path) -> None:
    """Print one memory, given its id or its path inside the vault."""
    root = vault_root(vault_path)
    if request.version:
        with service(vault_path) as svc:
            view = svc.run(request)
    elif client.serving(root) is not None:
        view = Remote(root).run(request)
    else:
        memory = lookup_anywhere(vault_path, request.ref)
        view = view_of(memory, stale=local_vault(vault_path)[0].stale(memory))
    emit_json(view.as_json()) if as_json else click.echo(render.memory_detail(view))


@cli.command(name="list")
@operation(ops.List)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of normalized memories.")
@vault_option
def list_(request: ops.List, as_json: bool, vault_path: Path) -> None:
    """List every memory in the vault."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        listed = Remote(root).run(request)
    else:
        listed = [view_of(m) for vault in local_vaults(vault_path) for m in vault.scan().memories]
    emit_json([view.as_json() for view in listed]) if as_json else click.echo(render.memory_rows(listed))


@cli.command()
@operation(ops.Doctor)
@click.option("--json", "as_json", is_flag=True, help='Print {"memories": N, "errors": [...], "warnings": [...]} '
              'and each client\'s checks ("claude_code", "gemini", "codex", "opencode").')
@vault_option
def doctor(request: ops.Doctor, as_json: bool, vault_path: Path) -> None:
    """Check every file; exit status 1 when any file has a problem."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        found = Remote(root).run(request)
    else:
        vault, config = local_vault(vault_path)
        scan = vault.scan()
        problems = [*scan.problems, *vault.anchor_problems(scan.memories)]
        found = DoctorResult(memories=len(scan.memories), errors=[p.as_dict() for p in problems],
                             warnings=checks.warnings(scan.memories, root, user_vault_root(config, root)))
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
        click.echo(f"{render.count(report['memories'], 'memory')}, {render.count(count, 'problem')}")
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
@operation(ops.Reindex)
@vault_option
def reindex(request: ops.Reindex, vault_path: Path) -> None:
    """Rebuild every index from the files (into a new generation, swapped in whole)."""
    root = vault_root(vault_path)
    if client.serving(root) is not None:
        report = Remote(root).run(request)
        click.echo(f"indexed {render.count(report.memories, 'memory')} ({report.chunks} chunks) in {report.seconds:.1f} s "
                   f"by the running server; {render.count(report.problems, 'problem file')}{_doctor_lists(report.problems)}")
        return
    from indexer.rebuild import rebuild

    from ..service.app import configured_embedder

    vault, config = local_vault(vault_path)
    with progress_bar("indexing") as progress:
        result = rebuild(vault, configured_embedder(config), progress)
    click.echo(
        f"indexed {render.count(result.memories, 'memory')} ({result.chunks} chunks) in {result.seconds:.1f} s; "
        f"{result.embedded} texts embedded, {render.count(result.problems, 'problem file')}"
        f"{_doctor_lists(result.problems)}"
    )


def _doctor_lists(problems: int) -> str:
    return " (memdir doctor lists them with line and reason)" if problems else ""


@cli.command()
@operation(ops.Search, query=ARGUMENT, collections=Opt("--collection"), types=Opt("--type"), tags=Opt("--tag"),
           include_superseded=Opt("--all"), as_of=Opt(metavar="DATE|COMMIT"), after=Opt(metavar="DATE"),
           before=Opt(metavar="DATE"))
@click.option("--json", "as_json", is_flag=True, help='Print {"results": [...]} as JSON, with "window" or "as_of" when a time window or a past commit shaped them.')
@vault_option
def search(request: ops.Search, as_json: bool, vault_path: Path) -> None:
    """Hybrid search (meaning + keywords + links); without QUERY, --days-back, --after or --before list a timeline."""
    with service(vault_path) as svc:
        found = svc.run(request)
    if as_json:  # one shape for scripts and the model: {"results": [...]} and what shaped it, when anything did
        emit_json(ops.as_json(found))
    else:
        click.echo((render.as_of(found.as_of) if request.as_of and found.as_of else "") + render.window(found.window)
                   + render.search_results(found.results))


@cli.command()
@operation(ops.Log, ref=ARGUMENT)
@click.option("--json", "as_json", is_flag=True, help="Print the versions as JSON.")
@vault_option
def log(request: ops.Log, as_json: bool, vault_path: Path) -> None:
    """A memory's committed versions, newest first: commit, date, author and what changed."""
    with service(vault_path) as svc:
        report = svc.run(request)
    emit_json(ops.as_json(report)) if as_json else click.echo(render.memory_log(report))


@cli.command()
@operation(ops.Relationships, memory_id=ARGUMENT, relationship_type=Opt("--type"))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@vault_option
def links(request: ops.Relationships, as_json: bool, vault_path: Path) -> None:
    """Show a memory's relations: links out, backlinks, its supersedes chain and ghost targets."""
    with service(vault_path) as svc:
        report = svc.run(request)
    emit_json(ops.as_json(report)) if as_json else click.echo(render.relations(report))


@cli.command()
@operation(ops.Link, source=ARGUMENT, target=ARGUMENT, relation=Opt("--as"))
@click.option("--json", "as_json", is_flag=True, help="Print SOURCE's relations as JSON.")
@vault_option
def link(request: ops.Link, as_json: bool, vault_path: Path) -> None:
    """Record a typed relation from SOURCE to TARGET in SOURCE's frontmatter (both are memory ids)."""
    with service(vault_path) as svc:
        report = svc.run(request)
    emit_json(ops.as_json(report)) if as_json else click.echo(
        ("" if report.changed else "already recorded; nothing changed\n") + render.relations(report))


# -- outcome learning -------------------------------------------------------------------------

def pairs(values: list[str]) -> dict[str, str]:
    """`ID OUTCOME [ID OUTCOME ...]` as {id: outcome}."""
    if len(values) % 2:
        raise click.UsageError("give pairs: ID OUTCOME [ID OUTCOME ...]")
    return dict(zip(values[::2], values[1::2]))


@cli.command()
@operation(ops.Score, skip={"outcome": "how a conversation's previous exchange went; a command is no conversation"},
           memory_scores=Opt(positional=True, many=True, type=click.STRING, convert=pairs,
                             metavar="ID OUTCOME [ID OUTCOME ...]"))
@vault_option
def score(request: ops.Score, vault_path: Path) -> None:
    """Record outcomes (worked, partial, failed, unknown) for memories; only their counters change."""
    with service(vault_path) as svc:
        result = svc.run(request)
    click.echo(render.score_answer(result))


@cli.command()
@operation(ops.Gc)
@vault_option
def gc(request: ops.Gc, vault_path: Path) -> None:
    """Apply the lifecycle: promote, demote and expire memories (logged to .memdir/lifecycle.jsonl)."""
    with service(vault_path) as svc:
        decisions = svc.run(request)
    click.echo(render.lifecycle(decisions, request.dry_run))


@cli.command()
@operation(ops.Stats)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
@vault_option
def stats(request: ops.Stats, as_json: bool, vault_path: Path) -> None:
    """Count the vault's memories by collection and type, scored, superseded and problem files."""
    with service(vault_path) as svc:
        report = svc.run(request)
    emit_json(ops.as_json(report)) if as_json else click.echo(render.stats(report))


@cli.command()
@operation(ops.Delete, memory_id=ARGUMENT)
@vault_option
def delete(request: ops.Delete, vault_path: Path) -> None:
    """Move a memory's file to .trash/ (`memdir restore ID` brings it back)."""
    with service(vault_path) as svc:
        deleted = svc.run(request)
    click.echo(render.deleted(deleted))


@cli.command()
@operation(ops.Verify, ids=Opt(positional=True, metavar="MEMORY_IDS..."))
@click.option("--json", "as_json", is_flag=True, help='Print {"verified": [{id, title, anchors, was_stale, still_stale}]}.')
@vault_option
def verify(request: ops.Verify, as_json: bool, vault_path: Path) -> None:
    """Confirm memories still hold: anchor them to the project files they cite as those are now."""
    with service(vault_path) as svc:
        report = svc.run(request)
    emit_json(ops.as_json(report)) if as_json else click.echo(render.verified(report))


@cli.command()
@operation(ops.Review)
@click.option("--json", "as_json", is_flag=True, help='Print {"items": [{kind, ids, reason, action, key, source}]} (path, line: an invalid file\'s).')
@vault_option
def review(request: ops.Review, as_json: bool, vault_path: Path) -> None:
    """What needs a human decision: stale, duplicate, contradicting, expiring, invalid or suspicious memories."""
    with service(vault_path) as svc:
        report = svc.run(request)
    emit_json(ops.as_json(report)) if as_json else click.echo(render.review_items(report))


@cli.command()
@operation(ops.Restore, memory_id=ARGUMENT)
@vault_option
def restore(request: ops.Restore, vault_path: Path) -> None:
    """Put a deleted memory back from .trash/ where it was; refuses if its id or place is taken."""
    with service(vault_path) as svc:
        restored = svc.run(request)
    click.echo(render.restored(restored))


@cli.command()
@operation(ops.Ingest, paths=Opt(positional=True, type=click.Path(path_type=Path),
                                 convert=lambda paths: [str(p.resolve()) for p in paths]), tags=Opt("--tag"))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per file.")
@vault_option
def ingest(request: ops.Ingest, as_json: bool, vault_path: Path) -> None:
    """Bring PDF, HTML, text and Markdown documents (or folders of them) into books/."""
    with service(vault_path) as svc:
        results = svc.run(request)
    emit_json(ops.as_json(results)) if as_json else click.echo(render.ingested(results))
    if any(r.status == "error" for r in results):
        sys.exit(1)


@cli.command()
@operation(ops.Books)
@click.option("--json", "as_json", is_flag=True, help="Print the books as JSON.")
@vault_option
def books(request: ops.Books, as_json: bool, vault_path: Path) -> None:
    """List the books: ingested documents and hand-written references (remove one with `memdir delete ID`)."""
    with service(vault_path) as svc:
        listed = svc.run(request)
    emit_json(ops.as_json(listed)) if as_json else click.echo(render.books(listed))


@cli.command(name="suggest-merges")
@operation(ops.SuggestMerges)
@click.option("--json", "as_json", is_flag=True)
@vault_option
def suggest_merges(request: ops.SuggestMerges, as_json: bool, vault_path: Path) -> None:
    """List groups of near-duplicate memories (nothing is merged automatically)."""
    with service(vault_path) as svc:
        clusters = svc.run(request)
    emit_json(ops.as_json(clusters)) if as_json else click.echo(render.clusters(clusters))


@cli.command()
@operation(ops.Merge, ids=ARGUMENT, title=Opt("--into"))
@vault_option
def merge(request: ops.Merge, vault_path: Path) -> None:
    """Merge memories into one that supersedes them; the sources move to .trash/."""
    with service(vault_path) as svc:
        merged = svc.run(request)
    click.echo(f"{merged.id}  {merged.path}  (supersedes {', '.join(request.ids)}; sources moved to .trash/)")


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
    try:
        info = client.ensure(root)
        code = client.request(info, "POST", "/api/ui/code", {}, vault=root)["code"]
    except (client.Unavailable, client.RemoteError) as exc:  # one line, as every other command's errors
        raise click.ClickException(str(exc)) from None
    url = f"http://127.0.0.1:{info.port}/ui/login?code={code}"
    if no_browser:
        click.echo(url)
        return
    import webbrowser

    if webbrowser.open(url):
        click.echo(f"opened the memdir pages of {root} in the browser", err=True)
        return
    click.echo(url)  # no browser here (a server over ssh, a container): the user opens it where there is one
    click.echo("no browser to open here: open the address above (its login code works once, within a minute)", err=True)


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


class _BeforeClick(click.Command):
    """`memdir hook`, which the console script answers before loading click (entry.py: a hook runs on every prompt and
    must start in milliseconds). Listed here so `memdir --help` names it; its help is the usage line the hook prints."""

    def __init__(self) -> None:
        super().__init__("hook", add_help_option=False, context_settings={"ignore_unknown_options": True},
                         params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
                         short_help="Run by an assistant each turn: prompt, stop, session-start.")

    def get_help(self, ctx: click.Context) -> str:
        from ..clients.hooks import USAGE

        return USAGE

    def invoke(self, ctx: click.Context) -> Any:
        from ..clients.hooks import main as hook_main

        ctx.exit(hook_main(list(ctx.params["args"])))


cli.add_command(_BeforeClick())


def main() -> None:
    cli(prog_name="memdir")
