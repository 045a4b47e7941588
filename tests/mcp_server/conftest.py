from __future__ import annotations

from pathlib import Path

import pytest

from mcp_server.service.app import App
from mcp_server.service.memory_service import MemoryService


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def service(hashing_example: Path):
    app = App(hashing_example)
    yield MemoryService(app)
    app.close()
