"""A full disk costs a prompt its turn's bookkeeping, never its context."""

from __future__ import annotations

from pathlib import Path

from mcp_server.server.served import open_vault
from mcp_server.service.turns import LOG_NAME


def test_a_prompt_whose_turn_cannot_be_recorded_on_a_full_disk_still_gets_its_context(hashing_example: Path):
    # The turn log's append met ENOSPC (here /dev/full, the kernel's full disk) and the whole prompt failed: on a
    # full disk no prompt got any context, though searching needs no room.
    (hashing_example / LOG_NAME).parent.mkdir(parents=True, exist_ok=True)
    (hashing_example / LOG_NAME).symlink_to("/dev/full")
    served = open_vault(hashing_example, lambda config: None)
    try:
        result = served.hooks.prompt({"session_id": "s-full-disk", "cwd": str(hashing_example.parent),
                                      "hook_event_name": "UserPromptSubmit",
                                      "prompt": "how do we make celery retries safe"})
        assert "[id:m-a4c81f63]" in result["additionalContext"]
    finally:
        served.close()
