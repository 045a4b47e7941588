"""Each command that runs an operation takes its options from the operation's request model (cli/options.py):
every field is reachable from the command line, or named as not on it with the reason; each option's type,
multiplicity, choices, default and requiredness are the field's; a value the field refuses is a usage error
naming the option (exit 2), never a traceback."""

from __future__ import annotations

import types
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Union, get_args, get_origin

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

from mcp_server.cli import commands
from mcp_server.cli.commands import cli
from mcp_server.cli.options import operation
from mcp_server.service import operations as ops
from mcp_server.views.results import SearchResult

# The operations no command runs, and why.
NOT_COMMANDS = {
    "update": "the model's edit of a memory; a person edits the Markdown file",
    "append": "the model's addition to a memory; a person edits the Markdown file",
    "linked": "the model's look-up of memories about a project file",
    "insights": "the model's overview before a task; a person runs search",
    "ingest_document": "the model's ingest, limited to paths inside the project; a person runs ingest",
    "record_response": "the model's record of an exchange; the hooks capture exchanges",
}
# Fields the command line takes in a type of its own, which the command turns into the field's value.
OWN_TYPES = {("ingest", "paths"): "path", ("score", "memory_scores"): "text"}
CLICK_NAMES = {str: "text", int: "integer", float: "float"}


def tied() -> dict[str, click.Command]:
    return {name: command for name, command in cli.commands.items()
            if getattr(command.callback, "operation", None) is not None}


def value_type(annotation: Any) -> tuple[Any, bool]:
    """A field's annotation as one value's bare type and whether the field is a list."""
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    many = get_origin(annotation) is list
    if many:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation, many


def test_every_operation_is_run_by_one_command_or_named_with_the_reason_it_is_not():
    run = [command.callback.operation.op for command in tied().values()]
    assert len(run) == len(set(run))
    assert sorted(run + list(NOT_COMMANDS)) == sorted(ops.REQUESTS)
    assert all(NOT_COMMANDS.values())


@pytest.mark.parametrize("name", sorted(tied()))
def test_every_field_of_the_operation_is_an_option_of_the_fields_type_or_named_as_not_on_the_cli(name: str):
    command = tied()[name]
    op, skipped = command.callback.operation, command.callback.not_on_cli
    params = {param.name: param for param in command.params}
    for field, info in op.model_fields.items():
        if field in skipped:
            assert skipped[field] and field not in params, (name, field)
            continue
        assert field in params, f"ops.{op.__name__}.{field} is not reachable from `memdir {name}`"
        param = params[field]
        kind, many = value_type(info.annotation)
        assert param.required == info.is_required(), (name, field)
        if (name, field) in OWN_TYPES:
            assert param.type.name == OWN_TYPES[name, field], (name, field)
            continue
        assert (param.multiple or param.nargs == -1) == many, (name, field)
        if kind is bool:
            assert isinstance(param, click.Option) and param.is_flag and param.default is info.get_default(), field
        elif isinstance(param, click.Option) and param.flag_value is not None and param.is_flag:
            assert get_origin(kind) is Literal and param.flag_value in get_args(kind), (name, field)
        elif get_origin(kind) is Literal:
            assert isinstance(param.type, click.Choice) and tuple(param.type.choices) == get_args(kind), (name, field)
        else:
            assert param.type.name == CLICK_NAMES[kind], (name, field, param.type.name)
        if isinstance(param, click.Option) and not many and not info.is_required():
            assert param.default == info.get_default(), (name, field)
        if isinstance(param, click.Option):
            assert param.help and info.description and param.help.startswith(info.description), (name, field)


def test_a_field_added_to_an_operation_becomes_an_option_and_one_the_cli_cannot_type_is_refused_at_import():
    class Wider(ops.Search):
        colour: Annotated[Literal["red", "blue"], Field(description="A colour")] = "red"
        pair: Annotated[list[str], Field(max_length=2, description="At most two")] = []

    seen: list[ops.Op[Any]] = []

    @click.command()
    @operation(Wider)
    def wider(request: Wider) -> None:
        seen.append(request)

    assert CliRunner().invoke(wider, ["--colour", "blue", "--days-back", "2"]).exit_code == 0
    assert seen[0].colour == "blue" and seen[0].days_back == 2.0  # type: ignore[attr-defined]
    refused = CliRunner().invoke(wider, ["--colour", "green"])
    assert refused.exit_code == 2 and "'--colour'" in refused.output
    too_many = CliRunner().invoke(wider, ["--pair", "a", "--pair", "b", "--pair", "c"])  # what no one value shows
    assert too_many.exit_code == 2 and "`--pair` list should have at most 2 items" in too_many.output
    assert len(seen) == 1

    class Untyped(ops.Search):
        weights: dict[str, float] = {}

    with pytest.raises(TypeError, match=r"Untyped\.weights"):
        operation(Untyped)(lambda request: None)


@pytest.fixture
def asked(monkeypatch, vault_root: Path) -> list[ops.Op[Any]]:
    """The requests the commands hand to the service (which answers an empty search)."""
    requests: list[ops.Op[Any]] = []

    class Recorder:
        def run(self, request: ops.Op[Any]) -> Any:
            requests.append(request)
            return SearchResult(results=[])

    @contextmanager
    def recording(vault_path: Path) -> Iterator[Recorder]:
        yield Recorder()

    monkeypatch.setattr(commands, "service", recording)
    return requests


def test_search_builds_the_request_from_every_option_and_leaves_out_what_was_not_given(asked, vault_root: Path):
    args = ["search", "ledger", "--days-back", "2.5", "--id", "m-1", "--collection", "working", "--collection",
            "history", "--type", "fact", "--tag", "a", "--tag", "b", "--sort-by", "recency", "--limit", "3", "--all",
            "--as-of", "2026-01-01", "--after", "2025-01-01", "--before", "2025-12-31", "--vault", str(vault_root)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    assert CliRunner().invoke(cli, ["search", "ledger", "--vault", str(vault_root)]).exit_code == 0
    full, bare = asked
    assert full == ops.Search(query="ledger", days_back=2.5, id="m-1", collections=["working", "history"],
                              types=["fact"], tags=["a", "b"], sort_by="recency", limit=3, include_superseded=True,
                              as_of="2026-01-01", after="2025-01-01", before="2025-12-31")
    assert bare.wire() == {"query": "ledger"}  # the server applies its defaults to the rest, as for any caller


@pytest.mark.parametrize("args, option, reason", [
    (["search", "--days-back", "-1"], "'--days-back'", "greater than 0"),
    (["search", "--days-back", "soon"], "'--days-back'", "not a valid float"),
    (["search", "q", "--limit", "lots"], "'--limit'", "not a valid integer"),
    (["search", "q", "--sort-by", "size"], "'--sort-by'", "relevance"),
    (["links", "m-1", "--type", "cousin"], "'--type'", "supersedes"),
    (["link", "m-1", "m-2", "--as", "cousin"], "'--as'", "depends_on"),
    (["add", "x", "--importance", "high"], "'--importance'", "not a valid float"),
    (["score", "m-1"], "", "give pairs: ID OUTCOME"),
    (["search", "q", "--limt", "3"], "'--limt'", "No such option"),
])
def test_a_value_the_operation_refuses_is_a_usage_error_naming_the_option(asked, vault_root: Path, args, option,
                                                                          reason):
    result = CliRunner().invoke(cli, [*args, "--vault", str(vault_root)])
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert option in result.output and reason in result.output and "Traceback" not in result.output
    assert asked == []


def test_a_flag_that_stands_for_one_value_sets_it_and_is_left_out_when_not_given(asked, vault_root: Path):
    CliRunner().invoke(cli, ["add", "text", "--private", "--tag", "x", "--vault", str(vault_root)])
    CliRunner().invoke(cli, ["add", "text", "--vault", str(vault_root)])
    private, shared = asked
    assert private.privacy == "private" and private.tags == ["x"]  # type: ignore[attr-defined]
    assert shared.wire() == {"content": "text"} and shared.privacy == "shared"  # type: ignore[attr-defined]
