"""The searched fields' index-time analysis in one pass: what Whoosh's analyzer chain gives, without its tokens.

Whoosh analyses a text by passing one mutable token object through five generators (tokenizer, identifier
parts, lower case, stop words, stemmer) and then counting positions per term: about 70 % of the CPU time a
pull's 1,000 memories took to become keyword-searchable (staging, fresh_keywords; bench/results/reindex-and-pull.md,
issue 32 item 4). Here the same steps run over plain strings in one loop. The result is Whoosh's own `field.index`
items (term bytes, frequency, weight, encoded positions), so the postings Whoosh writes and the scores of the
fresh documents do not change; `keyword.index_analysis` uses this only for a field analysed by
`keyword.ANALYZER` with Whoosh's positions format, and tests hold the two equal over real and odd texts.
"""

from __future__ import annotations

import re
from typing import Callable

from whoosh.analysis.tokenizers import default_pattern
from whoosh.formats import Positions
from whoosh.lang.porter import stem

from .stopwords import STOP_WORDS

Item = tuple[bytes, int, float, bytes]  # Whoosh's `field.index`: (term, frequency, weight, encoded positions)
MIN_LENGTH = 2  # Whoosh's StopFilter drops shorter tokens


def identifier_parts(whole: str) -> list[str]:
    """The parts a dotted or snake_case identifier is also indexed as, in the order `keyword.IdentifierParts`
    yields them (the whole token first, then each new part)."""
    if "." not in whole and "_" not in whole:
        return [whole]
    parts = [whole]
    seen = {whole}
    for dotted in whole.split("."):
        for part in (dotted, *dotted.split("_")):
            if part and part not in seen:
                seen.add(part)
                parts.append(part)
    return parts


def one_pass(field_format: Positions) -> Callable[[str], list[Item]]:
    """`field.index` for a text field of `keyword.ANALYZER` stored in `field_format` (Whoosh's Positions)."""
    boost = field_format.field_boost
    encode = field_format.encode

    def index(value: str) -> list[Item]:
        positions: dict[str, list[int]] = {}  # term -> its positions, terms in the order first seen (as Whoosh)
        pos = -1  # StopFilter renumbers the kept tokens: the first keeps its own position, the rest follow it
        known = _terms_of
        for number, token in enumerate(_tokens(value)):
            terms = known.get(token)
            if terms is None:
                terms = _remember(token)
            for term in terms:
                pos = number if pos < 0 else pos + 1
                found = positions.get(term)
                if found is None:
                    positions[term] = [pos]
                else:
                    found.append(pos)
        return [(term.encode("utf-8"), len(poses), len(poses) * boost, encode(poses))
                for term, poses in positions.items()]

    return index


# Whoosh's tokenizer pattern (`default_pattern`) with its group made non-capturing, so that `findall` gives the
# whole tokens: the same matches, without a match object per token
_tokens = re.compile(default_pattern.pattern.replace("(\\.", "(?:\\.", 1), default_pattern.flags).findall
_terms_of: dict[str, tuple[str, ...]] = {}  # a token -> the terms it is indexed as (words repeat: Zipf)
KNOWN_TOKENS = 200_000  # tokens remembered (a few tens of MB at most); forgotten all at once past it


def _remember(token: str) -> tuple[str, ...]:
    """The terms one token is indexed as: its identifier parts, lower-cased, stop words and 1-letter ones out, stemmed."""
    terms = tuple(stem(text) for part in identifier_parts(token)
                  if len(text := part.lower()) >= MIN_LENGTH and text not in STOP_WORDS)
    if len(_terms_of) >= KNOWN_TOKENS:
        _terms_of.clear()
    _terms_of[token] = terms
    return terms
