"""JSON for the hook processes: the C codec `json` itself uses, without `json`'s Python layer.

`import json` imports `re` (and `re` imports enum, functools and collections) to compile a few patterns the C
codec never needs: ~9 ms of CPU in every hook process, two per turn of every session (bench/results/s9-nine9.md).
`_json` is the same scanner and encoder `json.loads` and `json.dumps` run, so the text read and written is the
same; an interpreter without it falls back to `json`.
"""

from __future__ import annotations

TYPE_CHECKING = False  # a constant, not typing's (client.py)
if TYPE_CHECKING:
    from typing import Any

_BLANK = " \t\n\r"  # JSON's whitespace
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark


class _Reading:
    """What `json.JSONDecoder` hands its C scanner: the defaults of `json.loads`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__
    memo: dict = {}


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


try:
    from _json import encode_basestring, encode_basestring_ascii, make_encoder, make_scanner

    _scan = make_scanner(_Reading())
    # json.dumps's defaults: separators ", " and ": ", no indent, keys in their order, NaN allowed; no markers (a
    # hook's payload has no cycles, and a markers dict shared by calls could keep an entry after an error).
    _ascii = make_encoder(None, _unserializable, encode_basestring_ascii, None, ": ", ", ", False, False, True)
    _unicode = make_encoder(None, _unserializable, encode_basestring, None, ": ", ", ", False, False, True)
except (ImportError, TypeError):  # pragma: no cover - an interpreter without CPython's codec, or another signature
    _scan = None


def loads(data: str | bytes) -> Any:
    """`json.loads(data)` (bytes as UTF-8, with or without a byte-order mark, lone surrogates kept as json keeps
    them); a ValueError for text that is not one JSON value."""
    text = decoded(data, "surrogatepass") if isinstance(data, (bytes, bytearray)) else data
    if _scan is None:  # pragma: no cover
        import json
        return json.loads(text)
    start = len(text) - len(text.lstrip(_BLANK))
    value, end = scan(text, start)
    if text[end:].strip(_BLANK):
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def decoded(data: bytes | bytearray, errors: str = "strict") -> str:
    """`data.decode("utf-8-sig", errors)`: UTF-8 without its byte-order mark, if it starts with one. Taken off here:
    that codec is a module of its own (encodings.utf_8_sig), imported at its first use, 0.6 ms of a hook process's
    CPU at load 18 (bench/results/s23-hook23.md); "utf-8" is built in."""
    return (data[len(BOM):] if data.startswith(BOM) else data).decode("utf-8", errors)


def dumps(value: Any, ensure_ascii: bool = True) -> str:
    """`json.dumps(value, ensure_ascii=ensure_ascii)`."""
    if _scan is None:  # pragma: no cover
        import json
        return json.dumps(value, ensure_ascii=ensure_ascii)
    return "".join((_ascii if ensure_ascii else _unicode)(value, 0))


def scan(text: str, index: int) -> tuple[Any, int]:
    """The JSON value that begins at `index` of `text`, and the index just after it; a ValueError when no whole
    value begins there (a hook input cut mid-value, hook_input.py)."""
    if _scan is None:  # pragma: no cover
        import json
        return json.JSONDecoder().raw_decode(text, index)
    try:
        return _scan(text, index)
    except StopIteration as exc:  # the scanner found no value where one should begin
        raise ValueError(f"no JSON value at character {exc.value}") from None
    except SystemError:
        # The scanner raises json.decoder's JSONDecodeError, which it finds only when `json` was imported; in a hook
        # process it is not, and every malformed input read "SystemError: <_json.Scanner …> returned NULL".
        raise ValueError(f"not JSON: malformed after character {index}") from None


def without_lone_surrogates(value: Any) -> Any:
    """`value` (what `loads` read) with each lone surrogate in its strings replaced by U+FFFD. JSON may escape one
    ("\\ud800": a client that cut a string between the halves of an emoji), and `loads` reads it as is; then no write
    could encode it, and the prompt's turn and the exchange's capture failed in the server with a UnicodeEncodeError
    (bench/results/s21-attack21.md). A pair of escaped halves is read as its one character and kept.

    The lists and objects of `value` are changed in place (it is fresh from `loads`), walked with a list, not by
    recursion: json reads values nested ~1,000 deep, and a frame or two a level failed such a body past ~500 with a
    RecursionError (a server error; a hook dropped its event; bench/results/s22-review22.md)."""
    if not isinstance(value, (dict, list)):
        return _plain(value)
    waiting: list[Any] = [value]
    while waiting:
        node = waiting.pop()
        if type(node) is list:
            for place, item in enumerate(node):
                kind = type(item)
                if kind is str:
                    if not item.isascii():  # (a flag CPython keeps: ASCII text, most of it, costs no scan)
                        node[place] = _plain(item)
                elif kind is dict or kind is list:
                    waiting.append(item)
            continue
        if not all(key.isascii() for key in node) and any(_plain(key) is not key for key in node):
            items = list(node.items())  # a key to replace: the object again, in its order
            node.clear()
            node.update((_plain(key), item) for key, item in items)
        for key, item in node.items():
            kind = type(item)
            if kind is str:
                if not item.isascii():
                    node[key] = _plain(item)  # (a value replaced, no key added: the walk goes on)
            elif kind is dict or kind is list:
                waiting.append(item)
    return value


def _plain(value: Any) -> Any:
    """A string with its lone surrogates replaced by U+FFFD (itself when it has none); anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
    return value
