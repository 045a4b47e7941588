"""A loopback stand-in for the Gemini API (generateContent, streamGenerateContent): records every
request, answers from a script.

The real Gemini CLI talks to it through GOOGLE_GEMINI_BASE_URL. `script` decides, from the request,
whether the model calls a function or answers in text; a streamed answer is one server-sent event.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .loopback import Answer, LoopbackAPI

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}}
Script = Callable[[dict[str, Any]], Reply]


class FakeGemini(LoopbackAPI):
    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        if ":countTokens" in path:
            return 200, b'{"totalTokens": 10}', "application/json"
        if method != "POST" or (":generateContent" not in path and ":streamGenerateContent" not in path):
            return 404, b'{"error": {"code": 404, "message": "not faked"}}', "application/json"
        self.record(body)
        answer = _response(self.script(body))
        if ":streamGenerateContent" in path:
            return 200, f"data: {json.dumps(answer)}\r\n\r\n".encode(), "text/event-stream"
        return 200, json.dumps(answer).encode(), "application/json"


def _response(reply: Reply) -> dict[str, Any]:
    part = {"functionCall": {"name": reply["tool"], "args": reply.get("input", {})}} if "tool" in reply \
        else {"text": reply.get("text", "ok")}
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


def texts(request: dict[str, Any]) -> str:
    """Everything a request shows the model, as one string: system instruction, every text part and every
    function response."""
    parts: list[str] = []
    system = request.get("systemInstruction")
    if isinstance(system, dict):
        parts += [p.get("text", "") for p in system.get("parts", []) if isinstance(p, dict)]
    elif isinstance(system, str):
        parts.append(system)
    for content in request.get("contents", []):
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if "text" in part:
                parts.append(part["text"])
            elif "functionResponse" in part:
                parts.append(json.dumps(part["functionResponse"].get("response"), ensure_ascii=False))
    return "\n".join(parts)


def tool_names(request: dict[str, Any]) -> list[str]:
    return [d.get("name", "") for tool in request.get("tools", []) if isinstance(tool, dict)
            for d in tool.get("functionDeclarations", [])]
