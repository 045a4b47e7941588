"""A loopback stand-in for the Gemini API (generateContent, streamGenerateContent): records every
request, answers from a script.

The real Gemini CLI talks to it through GOOGLE_GEMINI_BASE_URL. `script` decides, from the request,
whether the model calls a function or answers in text; a streamed answer is one server-sent event.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}}
Script = Callable[[dict[str, Any]], Reply]


class FakeGemini:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: the test reads self.requests
                pass

            def do_GET(self) -> None:
                self._send(200, b"{}", "application/json")

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if ":countTokens" in self.path:
                    self._send(200, b'{"totalTokens": 10}', "application/json")
                    return
                if ":generateContent" not in self.path and ":streamGenerateContent" not in self.path:
                    self._send(404, b'{"error": {"code": 404, "message": "not faked"}}', "application/json")
                    return
                with fake._lock:
                    fake.requests.append(body)
                answer = _response(fake.script(body))
                if ":streamGenerateContent" in self.path:
                    self._send(200, f"data: {json.dumps(answer)}\r\n\r\n".encode(), "text/event-stream")
                else:
                    self._send(200, json.dumps(answer).encode(), "application/json")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeGemini":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)


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
