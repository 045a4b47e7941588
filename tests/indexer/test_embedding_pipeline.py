"""A rebuild embeds each text once, shortest first, and says how far it is."""

from __future__ import annotations

import numpy as np

from pathlib import Path

from indexer.chunking import NEXT, PREVIOUS
from indexer.embed import CachedEmbedder, HashingEmbedder
from indexer.generations import Layout
from indexer.index import EMBED_SLICE, Index, build_generation
from tests.conftest import memory_text, write
from tests.indexer.helpers import open_index
from vault import Vault


def _turn(memory_id: str, body: str, previous: str | None = None) -> str:
    return memory_text(memory_id, f"Turn {memory_id[-1]}", body, extra=f"previous: {previous}\n" if previous else "")


def _unit_texts(index: Index, memory_id: str, role: str) -> list[str]:
    from indexer.chunking import chunks_for

    memory = index.get(memory_id)
    return [u.text for c in chunks_for(memory, index.neighbours(memory)) for u in c.units if u.role == role]


def test_a_memorys_next_unit_is_its_followers_previous_unit_and_is_embedded_once(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint? It looked bright."))
    write(hashing_root, "history/b.md", _turn("m-0000000b", "Sam: A sunset over the lake.", "m-0000000a"))
    model = HashingEmbedder()
    index = open_index(hashing_root, model)
    pair = _unit_texts(index, "m-0000000a", NEXT)
    assert pair == _unit_texts(index, "m-0000000b", PREVIOUS) and len(pair) == 1
    assert "What did you paint?" in pair[0] and "A sunset over the lake." in pair[0]
    owners = dict(index.unit_owners())
    units = {role for owner, role in owners.values()}
    assert units >= {NEXT, PREVIOUS} and len(owners) == 6  # a: whole, 2 sentences, next; b: whole, previous
    assert model.texts_embedded == 5  # the pair's one text, embedded once for both units
    pair_units = [next(u for u, (o, r) in owners.items() if r == role) for role in (NEXT, PREVIOUS)]
    first, second = index.unit_vectors(np.array(pair_units, dtype=np.int64))
    assert first.tobytes() == second.tobytes()
    index.close()


def test_a_follower_chunked_as_a_document_lends_its_own_text_to_the_next_unit(hashing_root: Path):
    write(hashing_root, "history/a.md", _turn("m-0000000a", "Dana: What did you paint?"))
    long_body = "Sam: " + " ".join(f"Sentence number {n} about the lake." for n in range(80))
    write(hashing_root, "history/b.md", _turn("m-0000000b", long_body, "m-0000000a"))
    index = open_index(hashing_root)
    assert _unit_texts(index, "m-0000000b", PREVIOUS) == []  # a document has no context units
    assert _unit_texts(index, "m-0000000a", NEXT)[0].startswith("Turn a\nDana: What did you paint?\nSam: Sentence")
    index.close()


def test_a_rebuild_reports_reading_then_embedding_until_every_text_is_done(hashing_root: Path):
    count = EMBED_SLICE // 2  # a whole and a sentence unit each, and a pair: more than one slice of texts
    for n in range(count):
        previous = f"m-{n - 1:08x}" if n else None
        write(hashing_root, f"history/t{n}.md", _turn(f"m-{n:08x}", f"Turn {n} says hello. It has two parts.", previous))
    seen: list[tuple[str, int, int]] = []
    embedder = CachedEmbedder(HashingEmbedder(), None)
    build_generation(Vault(hashing_root), embedder, Layout(hashing_root), lambda *step: seen.append(step))
    reading = [s for s in seen if s[0] == "reading"]
    embedding = [s for s in seen if s[0] == "embedding"]
    assert reading[-1] == ("reading", count, count) and seen.index(reading[-1]) < seen.index(embedding[0])
    texts = embedding[-1][2]
    assert embedding[-1] == ("embedding", texts, texts) and len(embedding) == -(-texts // EMBED_SLICE) > 1
    assert [done for _, done, _ in embedding] == sorted(done for _, done, _ in embedding)


def test_texts_are_sent_to_the_model_shortest_first(hashing_root: Path):
    sizes = []

    class Recording(HashingEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            sizes.extend(len(t) for t in texts)
            return super().embed(texts)

    for n, words in enumerate([30, 3, 12, 1, 20]):
        write(hashing_root, f"notes/n{n}.md", memory_text(f"m-{n:08x}", f"Note {n}", "word " * words))
    Index.open(Vault(hashing_root), Recording()).close()
    assert sizes == sorted(sizes) and len(sizes) == 5

