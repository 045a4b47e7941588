"""Tables from a key to the few ids that hold it, with the ids as tuples rather than sets.

Nearly every key is held by one id (a memory's text, its names, the memory it follows), and a set
of one costs 216 bytes where a tuple of one costs 48: at 100k memories the difference was tens of MB
(bench/results/scale.md, issue 32). Lookups read the tuple as they read the set; order is insertion order.
"""

from __future__ import annotations


def hold(table: dict[str, tuple[str, ...]], key: str, holder: str) -> None:
    held = table.get(key, ())
    if holder not in held:
        table[key] = (*held, holder)


def let_go(table: dict[str, tuple[str, ...]], key: str, holder: str) -> None:
    """Drop one holder; a key left with none leaves the table."""
    rest = tuple(h for h in table.get(key, ()) if h != holder)
    if rest:
        table[key] = rest
    else:
        table.pop(key, None)
