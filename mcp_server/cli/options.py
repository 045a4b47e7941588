"""A command's click parameters derived from its operation's request model (service/operations.py).

Each field of the model becomes an option: its type (str, int, float; a Literal as a choice; a bool as a flag),
whether it repeats (a list), its default, whether it is required and its help text (the field's description,
the one text the MCP tools show too) come from the field. What is the command line's own is stated per command,
in a small table: a name that differs (`--all` for include_superseded), a positional argument, a metavar, a flag
that sets one value, a CLI type and how its value becomes the field's. A field no command offers is named with
the reason (NOT_ON_CLI, or a command's `skip`). The command receives the built request: it runs it and formats
the answer. A value the field refuses (a negative `--days-back`) is a usage error naming the option (exit 2).

Light on purpose (click, pydantic and the operations): `memdir --help` imports it.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from typing import Annotated, Any, Callable, Literal, TypeVar, Union, get_args, get_origin

import click
from click.core import ParameterSource
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticError
from pydantic.fields import FieldInfo

from vault.errors import ValidationError

from ..service import operations as ops

F = TypeVar("F", bound=Callable[..., Any])

# The fields no command offers, and why.
NOT_ON_CLI = {
    "session": "the conversation a call belongs to, which the hooks and the MCP proxy name; a command is no conversation",
    "include_private": "the command line is the user's own: their private memories are always theirs to see",
}
CLICK_TYPES: dict[Any, click.ParamType] = {str: click.STRING, int: click.INT, float: click.FLOAT}


@dataclass(frozen=True)
class Opt:
    """What is the command line's own about one field; the rest comes from the field."""

    name: str = ""  # the option's name ("--all"); "" = the field's, with dashes
    positional: bool = False  # an argument (a list field takes any number, nargs=-1)
    metavar: str | None = None
    flag_value: Any = None  # a flag that sets the field to this value (`--private` for privacy="private")
    many: bool = False  # takes any number of values though the field is no list (`convert` makes it one)
    type: click.ParamType | None = None  # the command line's own type; `convert` turns its value into the field's
    convert: Callable[[Any], Any] | None = None


ARGUMENT = Opt(positional=True)


@dataclass(frozen=True)
class Shape:
    """A field's type as the command line takes it: one value's type (its constraints kept) and whether it repeats."""

    kind: Any
    many: bool

    @property
    def core(self) -> Any:
        return get_args(self.kind)[0] if get_origin(self.kind) is Annotated else self.kind


def shape(info: FieldInfo) -> Shape:
    """`Annotated[float, Field(gt=0)] | None` is one float > 0; `list[str]` is any number of str."""
    kind = info.annotation
    if get_origin(kind) in (Union, types.UnionType):
        kind = next(arg for arg in get_args(kind) if arg is not type(None))
    if get_origin(kind) is list:
        return Shape(get_args(kind)[0], True)
    return Shape(Annotated[(kind, *info.metadata)] if info.metadata else kind, False)


def click_type(op: type[ops.Op[Any]], field: str, kind: Shape) -> click.ParamType:
    core = kind.core
    if get_origin(core) is Literal:
        return click.Choice(get_args(core))
    if core not in CLICK_TYPES:
        raise TypeError(f"ops.{op.__name__}.{field} ({core}) has no command-line type: give the command an Opt with "
                        f"type and convert, or skip it with the reason")
    base = CLICK_TYPES[core]
    return Checked(base, kind.kind) if kind.kind is not core else base


class Checked(click.ParamType):
    """A click type that also holds the field's constraints: `--days-back -1` is refused naming the option."""

    def __init__(self, base: click.ParamType, kind: Any) -> None:
        self.base, self.adapter, self.name = base, TypeAdapter(kind), base.name

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = self.base.convert(value, param, ctx)
        try:
            return self.adapter.validate_python(value)
        except PydanticError as exc:
            self.fail(f"{ops.expected(exc.errors(include_url=False)[0])} (got {value!r})", param, ctx)


def help_text(info: FieldInfo, many: bool) -> str | None:
    text = info.description
    if not text:
        return None
    text += " (repeatable)" if many else ""
    return text if text.endswith(".") else text + "."


def parameter(op: type[ops.Op[Any]], field: str, opt: Opt) -> Callable[[F], F]:
    """The click decorator for one field."""
    info = op.model_fields[field]
    kind = shape(info)
    many = kind.many or opt.many
    default = info.get_default()
    required = info.is_required()
    name = option_name(field, opt)
    attrs: dict[str, Any] = {"help": help_text(info, many), "metavar": opt.metavar, "required": required}
    if opt.flag_value is not None:
        return click.option(name, field, flag_value=opt.flag_value, default=default, **attrs)
    if kind.core is bool and not opt.positional:
        return click.option(name, field, is_flag=True, default=bool(default), **attrs)
    ptype = opt.type or click_type(op, field, kind)
    if opt.positional:
        return click.argument(field, type=ptype, nargs=-1 if many else 1, required=required, metavar=opt.metavar)
    shown = not required and default not in (None, [], False)
    return click.option(name, field, type=ptype, multiple=many, default=None if required or many else default,
                        show_default=shown, **attrs)


def option_name(field: str, opt: Opt) -> str:
    """`--days-back` for days_back; an argument by its metavar (`QUERY`)."""
    if opt.positional:
        return opt.metavar or field.upper()
    return opt.name or "--" + field.replace("_", "-")


def operation(op: type[ops.Op[Any]], skip: dict[str, str] | None = None,
              **table: Opt) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The command runs `op`: an option per field (what `table` says of a field overrides the derived), and the
    command is called with `request=op(...)` built from what was given (a field left out keeps the model's
    default). `skip` names the fields this command does not offer, each with the reason."""
    skipped = {**{name: why for name, why in NOT_ON_CLI.items() if name in op.model_fields}, **(skip or {})}
    unknown = sorted((set(table) | set(skipped)) - set(op.model_fields))
    if unknown:
        raise TypeError(f"ops.{op.__name__} has no field {', '.join(unknown)}")
    offered = {name: table.get(name, Opt()) for name in op.model_fields if name not in skipped}

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def run(**given: Any) -> Any:
            ctx = click.get_current_context()
            arguments = {}
            for name, opt in offered.items():
                value = given.pop(name)
                if ctx.get_parameter_source(name) is ParameterSource.DEFAULT:
                    continue  # the model's default stands, as for any caller that leaves it out
                value = list(value) if isinstance(value, tuple) else value
                arguments[name] = opt.convert(value) if opt.convert else value
            try:
                request = op(**arguments)
            except ValidationError as exc:  # what no single option could check (a list too long), named as typed
                said = str(exc)
                for name, opt in offered.items():
                    said = said.replace(f"argument `{name}`", f"`{option_name(name, opt)}`")
                raise click.UsageError(said, ctx) from None
            return command(request=request, **given)

        for name, opt in reversed(offered.items()):  # click lists the parameters in the order they are decorated
            run = parameter(op, name, opt)(run)
        run.operation = op  # type: ignore[attr-defined]  # tests/test_cli_operations.py reads these two
        run.not_on_cli = skipped  # type: ignore[attr-defined]
        return run

    return decorate
