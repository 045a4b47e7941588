"""The compact owner table answers exactly as the dict it replaced, across buffered changes and folds."""

import random

from indexer import owners as owners_module
from indexer.owners import Owners


def test_random_adds_replacements_and_removals_read_back_as_a_dict_would(monkeypatch):
    monkeypatch.setattr(owners_module, "FOLD_AT", 16)  # fold often: every path through the buffer is taken
    rng = random.Random(3)
    table, expected = Owners(), {}
    for step in range(3000):
        item = rng.randrange(-2**62, 2**62) if rng.random() < 0.5 or not expected else rng.choice(list(expected))
        if rng.random() < 0.3:
            assert table.pop(item, None) == expected.pop(item, None)
        else:
            owner = (f"m-{rng.randrange(50)}", rng.choice(["whole", "turn", "pair"]))
            table[item] = owner
            expected[item] = owner
        if step % 11 == 0:  # a search's left-out units, read through the buffer as it stands
            names = {f"m-{rng.randrange(50)}" for _ in range(3)}
            assert table.ids_of(names, "whole").tolist() == sorted(
                i for i, (name, label) in expected.items() if name in names and label == "whole")
        if step % 97 == 0:
            assert table.items() == sorted(expected.items())
        probe = rng.choice(list(expected)) if expected and rng.random() < 0.5 else rng.randrange(10**6)
        assert table.get(probe) == expected.get(probe)
        assert (probe in table) == (probe in expected)
        if step % 13 == 0:  # many at once, buffered or folded, known or not, as one by one
            asked = rng.sample(list(expected), min(5, len(expected))) + [rng.randrange(10**6), probe]
            assert table.get_many(asked) == [expected.get(i) for i in asked]
    assert len(table) == len(expected)
    assert list(table) == sorted(expected)


def test_names_of_memories_gone_for_good_are_let_go(monkeypatch):
    monkeypatch.setattr(owners_module, "FOLD_AT", 4)
    table = Owners()
    for n in range(200):
        table[n] = (f"m-{n}", "whole")
        table.pop(n - 1, None)
    ids, codes, names = table.columns()
    assert ids.tolist() == [199]
    assert names[codes[0]] == "m-199"
    assert len(names) < 20


def test_a_table_made_in_one_pass_reads_as_one_made_row_by_row():
    rng = random.Random(5)
    rows = [(rng.randrange(-2**62, 2**62), (f"m-{n // 4}", rng.choice(["whole", "turn", "", "## Setup"]))) for n in range(2000)]
    rows += [(rows[7][0], ("m-late", "pair"))]  # an id given again: the later row wins, as with update
    made, expected = Owners.of(iter(rows)), Owners()
    expected.update(rows)
    assert made.items() == expected.items() and made.items()[0][0] == min(i for i, _ in rows)
    assert made.get(rows[7][0]) == ("m-late", "pair") and made.get(rows[3][0]) == rows[3][1]
    made[1] = ("m-new", "whole")  # and changes as any table does
    assert made.pop(rows[5][0]) == rows[5][1] and made.get(1) == ("m-new", "whole") and len(made) == len(expected.items())
    assert Owners.of([]).items() == []
