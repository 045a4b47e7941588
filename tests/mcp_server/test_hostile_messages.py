"""A hostile argument is refused in a message of a readable size: it is never echoed in full."""

from __future__ import annotations

import pytest

from vault.errors import ValidationError


def test_a_score_naming_a_hundred_thousand_character_id_is_refused_without_echoing_it(service):
    with pytest.raises(ValidationError) as refused:
        service.score({"m-" + "a" * 100_000: "worked"})
    assert len(str(refused.value)) < 200
