"""The bundled example vault's memdir.toml writes out today's defaults, so the README's first command shows
memdir as it ships; the one exception is its lifecycle schedule (off, so serving it leaves the checkout clean)."""

from __future__ import annotations

from mcp_server.config import default_config_text
from tests.conftest import EXAMPLE_VAULT


def test_the_example_vaults_settings_are_the_defaults_but_its_lifecycle_schedule():
    written = (EXAMPLE_VAULT / "memdir.toml").read_text().splitlines()
    defaults = default_config_text().splitlines()
    assert len(written) == len(defaults)
    differ = [(mine, default) for mine, default in zip(written, defaults) if mine != default]
    assert [default.split(" = ")[0] for _, default in differ] == ["every"], differ
    assert differ[0][0].startswith('every = "off"')
