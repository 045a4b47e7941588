"""Whoosh's pickles read without running code: only the classes and functions memdir's own keyword index holds.

Whoosh keeps its table of contents (the schema and the segment list), each compound segment's directory, its postings'
block headers and its stored fields as pickles, and reads them with `pickle.loads`: a rewritten one runs any code it
names (the s21 hostile repository, bench/results/s21-attack21.md). Unpickling runs code only through the globals a
pickle names (its GLOBAL / STACK_GLOBAL opcodes, resolved by `find_class`, then called by REDUCE or built by NEWOBJ),
so every pickle Whoosh reads goes through an unpickler that resolves only the names below, those memdir's schema and
postings are made of (tests/indexer/test_safe_pickle.py lists them from a real index). Any other name is refused:
the index "does not load", and its owner rebuilds it from the memory files, as for a damaged one.

With no code run by a read, an index that carries no stamp of this user's key (vault/state_stamp.py) can be checked
and adopted instead of rebuilt (indexer/adoption.py): the cost of an upgrade from a memdir before stamps.
"""

from __future__ import annotations

import io
import pickle
from typing import IO, Any

# (module, name) a memdir keyword index's pickles name: its schema (fields, formats, analyzers), its segments and
# codec, and what pickle protocol 2 names for builtins and bytes (`__builtin__` is Python 2's name, which Whoosh's
# protocol-2 pickles keep).
ALLOWED: frozenset[tuple[str, str]] = frozenset({
    ("_codecs", "encode"),  # bytes at protocol 2: encode(text, "latin1")
    *((builtins, name) for builtins in ("builtins", "__builtin__") for name in ("int", "long", "set", "frozenset")),
    ("collections", "defaultdict"),
    ("re", "_compile"),  # the tokenizers' expressions
    ("whoosh.analysis.analyzers", "CompositeAnalyzer"),
    ("whoosh.analysis.filters", "LowercaseFilter"),
    ("whoosh.analysis.filters", "StopFilter"),
    ("whoosh.analysis.filters", "StripFilter"),
    ("whoosh.analysis.morph", "StemFilter"),
    ("whoosh.analysis.tokenizers", "IDTokenizer"),
    ("whoosh.analysis.tokenizers", "RegexTokenizer"),
    ("whoosh.codec.whoosh3", "W3Codec"),
    ("whoosh.codec.whoosh3", "W3Segment"),
    ("whoosh.fields", "ID"),
    ("whoosh.fields", "KEYWORD"),
    ("whoosh.fields", "NUMERIC"),
    ("whoosh.fields", "Schema"),
    ("whoosh.fields", "TEXT"),
    ("whoosh.formats", "Existence"),
    ("whoosh.formats", "Frequency"),
    ("whoosh.formats", "Positions"),
    ("whoosh.lang.porter", "stem"),
    ("indexer.keyword", "IdentifierParts"),
})


class RefusedPickle(pickle.UnpicklingError):
    """A pickle in the keyword index names something memdir's own index never holds."""


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED:
            raise RefusedPickle(f"the keyword index names {module}.{name}, which memdir's own index never holds "
                                "(not read: a pickle that names it could run code)")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise RefusedPickle("the keyword index holds a persistent reference, which memdir's own index never does")


def loads(data: bytes, *args: Any, **kwargs: Any) -> Any:
    return _Restricted(io.BytesIO(data)).load()


def load(handle: IO[bytes], *args: Any, **kwargs: Any) -> Any:
    return _Restricted(handle).load()


class _PickleModule:
    """What `whoosh.index` and `whoosh.filedb.fileindex` reach as `pickle`: their reads restricted, writes as before."""
    loads = staticmethod(loads)
    load = staticmethod(load)
    dumps = staticmethod(pickle.dumps)
    dump = staticmethod(pickle.dump)
    UnpicklingError = pickle.UnpicklingError
    PicklingError = pickle.PicklingError


# Whoosh binds its readers at import (`from whoosh.compat import loads`, `load as load_pickle`, `import pickle`): each
# copy in a loaded Whoosh module is replaced, after the modules that read an index are loaded; whoosh.compat's own
# first, so that a module Whoosh imports later binds the restricted ones.
_READERS = ("whoosh.compat", "whoosh.index", "whoosh.filedb.structfile", "whoosh.filedb.compound",
            "whoosh.filedb.filetables", "whoosh.codec.whoosh3", "whoosh.columns", "whoosh.formats",
            "whoosh.reading", "whoosh.externalsort")


def install() -> None:
    """Make every pickle read of Whoosh's go through the restricted unpickler (idempotent; at indexer import)."""
    import importlib
    import sys

    for name in _READERS:
        importlib.import_module(name)
    originals = {id(pickle.loads): loads, id(pickle.load): load}
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "whoosh" or module_name.startswith("whoosh.")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is pickle:
                setattr(module, attribute, _PickleModule)
            elif id(value) in originals:
                setattr(module, attribute, originals[id(value)])
    # A table of contents in an older Whoosh format is read by a renaming unpickler of its own (whoosh.legacy):
    # memdir never wrote one, so none is read.
    importlib.import_module("whoosh.index").toc_loaders.clear()
