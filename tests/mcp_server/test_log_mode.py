"""The server's log names vault paths and errors: only its owner may read it, also after a rotation."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

from mcp_server.logs import configure_file


def test_the_log_is_created_0600_and_an_older_readable_log_and_a_rotated_one_are_0600(tmp_path: Path):
    path = tmp_path / "server.log"
    path.write_text("an older log\n")
    path.chmod(0o644)
    root = logging.getLogger()
    kept = root.handlers[:], root.level
    try:
        configure_file(path)
        logging.getLogger("memdir.test").warning("a line")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        root.handlers[0].doRollover()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers[:], _ = kept
        root.setLevel(kept[1])
