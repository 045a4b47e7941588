"""`memdir.toml`: typed sections, strict loading, and the defaults written out with their reasons.

Each layer declares the sections it owns as frozen dataclasses whose fields carry a `doc`
in their metadata; the entry point composes them, reads the file once and passes the
values down. Unknown keys and wrong types are errors naming the key, so a typo never
silently falls back to a default.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import tomllib
from pathlib import Path
from typing import Any, Iterable, Mapping, TypeVar, get_type_hints

from .errors import ConfigError

CONFIG_NAME = "memdir.toml"
S = TypeVar("S")


def setting(default: Any, doc: str) -> Any:
    """A config field with a default and the comment written next to it in memdir.toml."""
    if isinstance(default, dict):
        return dataclasses.field(default_factory=lambda: dict(default), metadata={"doc": doc})
    return dataclasses.field(default=default, metadata={"doc": doc})


def load_sections(vault_root: Path, sections: Mapping[str, type]) -> dict[str, Any]:
    """Read memdir.toml (if present) into one instance per section; missing keys keep their defaults."""
    path = vault_root / CONFIG_NAME
    raw: dict[str, Any] = {}
    if path.exists():
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from None
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    unknown = set(raw) - set(sections)
    if unknown:  # a typo's line and the name it likely meant, as for a value that does not fit
        headers = _header_lines(text)
        first = min(unknown, key=lambda name: (headers.get(name, 1 << 30), name))
        where = f"{path}:{headers[first]}" if first in headers else str(path)
        raise ConfigError(f"{where}: unknown section [{first}]{_meant(first, sections)}; known: {', '.join(sections)}")
    return {name: _section(cls, raw.get(name, {}), f"{path} [{name}]", _key_lines(text, name))
            for name, cls in sections.items()}


def _key_lines(text: str, section: str) -> dict[str, int]:
    """Line numbers of `key = ...` inside `[section]`, so an error can point at the line.

    A key of a subtable (`[search.recency.journal]`) is listed by its dotted name (`recency.journal.decay`).
    """
    lines: dict[str, int] = {}
    current = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            current = stripped.strip("[]").split("]")[0].strip()
        elif current and (current == section or current.startswith(f"{section}.")) and "=" in stripped \
                and not stripped.startswith("#"):
            key = stripped.split("=", 1)[0].strip().strip('"')
            lines.setdefault(key if current == section else f"{current[len(section) + 1:]}.{key}", number)
    return lines


def _section(cls: type[S], values: Any, where: str, lines: Mapping[str, int] | None = None) -> S:
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a table")
    hints = get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    # A setting taken out still stands in the memdir.toml every `memdir init` wrote: it is read and ignored, not refused.
    retired = getattr(cls, "RETIRED", frozenset())
    values = {key: value for key, value in values.items() if key not in retired}
    unknown = set(values) - known
    if unknown:  # the first by its line, with the name it likely meant
        first = min(unknown, key=lambda key: ((lines or {}).get(key, 1 << 30), key))
        also = f"; also unknown: {', '.join(sorted(unknown - {first}))}" if len(unknown) > 1 else ""
        raise ConfigError(f"{_at(where, (lines or {}).get(first))} {first}: unknown key{_meant(first, known)}{also}")
    checked = {}
    defaults = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    for name, value in values.items():
        line = (lines or {}).get(name)
        value = _check(value, hints[name], f"{_at(where, line)} {name}")
        factory = defaults[name].default_factory
        if isinstance(value, dict) and factory is not dataclasses.MISSING:
            value = _merged(factory(), value)  # a table overrides keys, never wipes the other defaults
        checked[name] = value
    try:
        return cls(**checked)
    except InvalidSetting as exc:  # a value of the right type that still does not parse
        raise ConfigError(f"{_at(where, (lines or {}).get(exc.key))} {exc.key}: {exc}") from None


def _header_lines(text: str) -> dict[str, int]:
    """The line of each top-level table's first header (`[search]`, or `[search.recency.fact]` for `search`)."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            found.setdefault(stripped.strip("[]").split("]")[0].split(".")[0].strip(), number)
    return found


def _meant(name: str, known: Iterable[str]) -> str:
    """` (did you mean author_boost?)` for a near miss of a known name, else nothing."""
    near = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean {near[0]}?)" if near else ""


def _at(where: str, line: int | None) -> str:
    """`<path> [section]` as `<path>:<line> [section]` when the key's line is known."""
    return where.replace(" [", f":{line} [", 1) if line else where


def within(settings: object, low: float, high: float, *names: str) -> None:
    """Refuse (InvalidSetting) a value outside low..high, or not finite, for a settings class's __post_init__."""
    for name in names:
        value = finite(name, getattr(settings, name))
        if not low <= value <= high:
            raise InvalidSetting(name, f"{value!r} is below {low:g}" if value < low and high == float("inf")
                                 else f"{value!r} is outside {low:g} to {high:g}")


def above_zero(settings: object, *names: str) -> None:
    """Refuse (InvalidSetting) a size or count of 0 or less, or not finite, for a settings class's __post_init__."""
    for name in names:
        value = finite(name, getattr(settings, name))
        if not value > 0:
            raise InvalidSetting(name, f"{value!r} is not above 0")


def finite(name: str, value: float) -> float:
    """The value, or InvalidSetting for `inf` and `nan` (TOML has both), which no setting means anything by."""
    if not math.isfinite(value):
        raise InvalidSetting(name, f"{value!r} is not a finite number")
    return value


class InvalidSetting(ValueError):
    """Raised by a settings class's __post_init__ for a value it cannot use."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def _merged(default: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    merged = dict(default)
    for key, value in given.items():
        merged[key] = {**default[key], **value} if isinstance(default.get(key), dict) and isinstance(value, dict) else value
    return merged


def _check(value: Any, expected: Any, where: str) -> Any:
    origin = getattr(expected, "__origin__", None)
    if origin is dict:
        key_type, value_type = expected.__args__
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a table")
        return {str(k): _check(v, value_type, f"{where}.{k}") for k, v in value.items()}
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if expected is bool and not isinstance(value, bool) or expected is not bool and isinstance(value, bool):
        raise ConfigError(f"{where}: expected {expected.__name__}, got {value!r}")
    if not isinstance(value, expected):
        raise ConfigError(f"{where}: expected {expected.__name__}, got {value!r}")
    return value


def render_defaults(sections: Mapping[str, type], header: str) -> str:
    """The text of a memdir.toml holding every default, each with its comment."""
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()] + [""]
    for name, cls in sections.items():
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        lines.append(f"[{name}]  # {doc}")
        tables: list[str] = []
        for item in dataclasses.fields(cls):  # type: ignore[arg-type]
            default = item.default_factory() if item.default_factory is not dataclasses.MISSING else item.default
            comment = item.metadata.get("doc", "")
            if isinstance(default, dict) and all(isinstance(v, dict) for v in default.values()):
                tables.append(f"# [{name}.{item.name}.*]: {comment}")
                for key, table in default.items():
                    tables.append(f"[{name}.{item.name}.{key}]")
                    tables += [f"{k} = {_toml(v)}" for k, v in table.items()]
                continue
            lines.append(f"{item.name} = {_toml(default)}  # {comment}".rstrip())
        lines += [""] + tables + ([""] if tables else [])
    return "\n".join(lines)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot render {value!r} as TOML")
