"""A hostile argument is refused in a message of a readable size: it is never echoed in full."""

from __future__ import annotations

import pytest

from vault.errors import ValidationError
from mcp_server.service import operations as ops


def test_a_score_naming_a_hundred_thousand_character_id_is_refused_without_echoing_it(service):
    with pytest.raises(ValidationError) as refused:
        service.score(ops.Score(memory_scores={"m-" + "a" * 100_000: "worked"}))
    assert len(str(refused.value)) < 200
