"""A loopback stand-in for the OpenAI Responses API (POST /v1/responses, streamed): records every
request, answers from a script. The real Codex CLI talks to it through a model provider's base_url."""

from __future__ import annotations

import json
from typing import Any, Callable

from .loopback import Answer, LoopbackAPI

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}, "namespace": ns (optional)}
Script = Callable[[dict[str, Any]], Reply]


class FakeResponses(LoopbackAPI):
    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script
        self.url += "/v1"  # a model provider's base_url

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if method == "GET":
            return 200, b'{"object": "list", "data": []}', "application/json"
        if not path.rstrip("/").endswith("/responses"):
            return 404, b'{"error": {"message": "not faked"}}', "application/json"
        number = self.record(body)
        return 200, b"".join(_events(self.script(body), number)), "text/event-stream"


def _events(reply: Reply, number: int) -> list[bytes]:
    if "tool" in reply:
        item = {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}", "name": reply["tool"],
                "arguments": json.dumps(reply.get("input", {})), "status": "completed"}
        if reply.get("namespace"):  # a tool inside a namespace (Codex puts each MCP server's tools in one)
            item["namespace"] = reply["namespace"]
    else:
        item = {"type": "message", "id": f"msg_{number}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": reply.get("text", "ok"), "annotations": []}]}
    response = {"id": f"resp_{number}", "object": "response", "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                          "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}}
    events = [{"type": "response.created", "response": {**response, "status": "in_progress", "output": []}},
              {"type": "response.output_item.added", "output_index": 0, "item": item}]
    if item["type"] == "message":  # the text as a delta too: OpenCode's AI SDK reads only the deltas
        events.append({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                       "content_index": 0, "delta": item["content"][0]["text"]})
    events += [{"type": "response.output_item.done", "output_index": 0, "item": item},
              {"type": "response.completed", "response": response}]
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def texts(request: dict[str, Any]) -> str:
    """Everything a request shows the model: instructions, every message's text, every tool output."""
    parts = [request.get("instructions") or ""]
    for item in request.get("input", []):
        if item.get("type") == "function_call_output":
            output = item.get("output")
            parts.append(output if isinstance(output, str) else json.dumps(output))
        if isinstance(item.get("content"), str):  # a system or user message as plain text (OpenCode)
            parts.append(item["content"])
        for content in item.get("content", []) if isinstance(item.get("content"), list) else []:
            parts.append(content.get("text", "") if isinstance(content, dict) else "")
    return "\n".join(parts)


def tool_names(request: dict[str, Any]) -> list[str]:
    """Every tool offered; a namespace's tools as "<namespace>/<tool>"."""
    names = []
    for tool in request.get("tools", []):
        if tool.get("type") == "namespace":
            names += [f"{tool.get('name')}/{t.get('name', '')}" for t in tool.get("tools", []) if isinstance(t, dict)]
        else:
            names.append(tool.get("name", ""))
    return names
