"""A server whose `.memdir` was deleted under it (`rm -rf .memdir`, `git clean -fdX`) holds its vault's locks again
within a few seconds: before, its flocks stayed on the deleted files, so a CLI command found the vault unserved and
opened its index beside the server."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from mcp_server import client
from mcp_server.server.served import open_vault


def test_a_server_whose_memdir_folder_was_deleted_holds_the_vaults_locks_again(hashing_example: Path):
    served = open_vault(hashing_example, lambda config: None)
    locks = [hashing_example / client.VAULT_LOCK, hashing_example / ".memdir" / "index.lock"]
    try:
        assert all(client.lock_held(path) for path in locks)
        deadline = time.monotonic() + 30
        while (hashing_example / ".memdir").exists():  # as `rm -rf` may, it meets the server's backfill writing a file
            assert time.monotonic() < deadline
            shutil.rmtree(hashing_example / ".memdir", ignore_errors=True)
        while not all(client.lock_held(path) for path in locks):
            assert time.monotonic() < deadline, "the deleted locks were never taken again"  # as before, until a restart
            served.drainer.ran.clear()
            served.drainer.ran.wait(deadline - time.monotonic())  # each pass of the server's own spool timer
        assert locks[0].read_text() == str(os.getpid())  # the CLI sends this vault's work to this server again
        assert served.app is not None and served.app.index.writable
    finally:
        served.close()
