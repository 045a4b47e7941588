"""A vault let go gives back every file descriptor at once, not at some later garbage collection."""

from __future__ import annotations

import gc
import os
from pathlib import Path

from mcp_server.server.served import open_vault
from mcp_server.service import operations as ops


def open_descriptors() -> dict[str, str]:
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed already
    return found


def test_a_closed_vault_keeps_no_descriptor_open_even_while_something_still_refers_to_it(hashing_example: Path):
    before = open_descriptors()
    gc.disable()  # nothing may depend on a collection
    try:
        served = open_vault(hashing_example, lambda config: None)
        served.service.search(ops.Search(query="celery retries"))  # the keyword segments and the embedding cache are read
        served.close()
        left = {fd: target for fd, target in open_descriptors().items()
                if fd not in before and str(hashing_example) in target}
        assert left == {}
        assert served.service is not None  # the server's slot, a session or a stack frame may still hold it
    finally:
        gc.enable()
