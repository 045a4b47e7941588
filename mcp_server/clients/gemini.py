"""Gemini CLI's hooks, translated to memdir's: the same hook library, another client's words.

Gemini CLI (0.61) calls its hooks SessionStart, BeforeAgent (a prompt was submitted) and AfterAgent
(the answer is complete). Its input carries the answer as `prompt_response` where Claude Code's Stop
carries `last_assistant_message`, and in headless runs (`gemini -p`) it prepends the SessionStart
context to the prompt, wrapped in <hook_context>: that wrapper is not what the user asked, so it is
cut off before the prompt is searched and captured. Standard library only: it runs on every prompt.
"""

from __future__ import annotations

import re
from typing import Any

# memdir's hook -> Gemini CLI's event (the names `memdir init --client gemini` registers)
EVENTS = {"session-start": "SessionStart", "prompt": "BeforeAgent", "stop": "AfterAgent"}
_INJECTED = re.compile(r"\A(?:\s*<hook_context>.*?</hook_context>\s*)+", re.DOTALL)


def hook_input(event: str, data: dict[str, Any]) -> dict[str, Any]:
    """Gemini CLI's hook input as the Claude Code shaped event memdir's server reads."""
    translated = dict(data)
    if isinstance(data.get("prompt"), str):
        translated["prompt"] = _INJECTED.sub("", data["prompt"])
    if event == "stop":
        translated["last_assistant_message"] = data.get("prompt_response") or ""
    return translated


def hook_output(event: str, context: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": context}}
