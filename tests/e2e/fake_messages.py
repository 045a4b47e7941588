"""A loopback stand-in for the Anthropic Messages API: records every request, answers from a script.

The real Claude Code binary talks to it through ANTHROPIC_BASE_URL. Each answer is streamed as
server-sent events the way the real API streams them; `script` decides, from the request, whether
the model calls a tool or answers in text.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .loopback import Answer, LoopbackAPI

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}}
Script = Callable[[dict[str, Any]], Reply]


class FakeMessages(LoopbackAPI):
    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method != "POST":
            return super().answer(method, path, body)
        if not path.startswith("/v1/messages") or path.startswith("/v1/messages/count_tokens"):
            return 200, json.dumps({"input_tokens": 10}).encode(), "application/json"
        number = self.record(body)
        reply = self.script(body)
        if body.get("stream"):
            return 200, b"".join(_events(reply, body, number)), "text/event-stream"
        return 200, json.dumps(_message(reply, body, number)).encode(), "application/json"


def _block(reply: Reply, number: int) -> dict[str, Any]:
    if "tool" in reply:
        return {"type": "tool_use", "id": f"toolu_{number:04d}", "name": reply["tool"], "input": reply.get("input", {})}
    return {"type": "text", "text": reply.get("text", "ok")}


def _message(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    block = _block(reply, number)
    return {"id": f"msg_{number:04d}", "type": "message", "role": "assistant", "model": body.get("model", "fake"),
            "content": [block], "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def _events(reply: Reply, body: dict[str, Any], number: int) -> list[bytes]:
    message = _message(reply, body, number)
    block = message["content"][0]
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})]
    if block["type"] == "tool_use":
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {**block, "input": {}}}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
    else:
        events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}}))
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": block["text"]}}))
    events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                                        "stop_sequence": None},
                                     "usage": {"output_tokens": 5}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events]


def texts(request: dict[str, Any]) -> str:
    """Everything a request shows the model, as one string: system prompt and every message's text."""
    parts: list[str] = []
    system = request.get("system")
    parts += [system] if isinstance(system, str) else [b.get("text", "") for b in system or [] if isinstance(b, dict)]
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content or []:
            if block.get("type") == "text":
                parts.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                parts.append(inner if isinstance(inner, str) else
                             " ".join(c.get("text", "") for c in inner or [] if isinstance(c, dict)))
    return "\n".join(parts)


def tool_names(request: dict[str, Any]) -> list[str]:
    return [tool.get("name", "") for tool in request.get("tools", [])]
