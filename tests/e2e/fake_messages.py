"""A loopback stand-in for the Anthropic Messages API: records every request, answers from a script.

The real Claude Code binary talks to it through ANTHROPIC_BASE_URL. Each answer is streamed as
server-sent events the way the real API streams them; `script` decides, from the request, whether
the model calls a tool or answers in text.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}}
Script = Callable[[dict[str, Any]], Reply]


class FakeMessages:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: the test reads self.requests
                pass

            def do_HEAD(self) -> None:
                self._send(200, b"", "text/plain")

            def do_GET(self) -> None:
                self._send(200, b"{}", "application/json")

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
                    self._send(200, json.dumps({"input_tokens": 10}).encode(), "application/json")
                    return
                with fake._lock:
                    fake.requests.append(body)
                    fake._ids += 1
                    number = fake._ids
                reply = fake.script(body)
                if body.get("stream"):
                    self._send(200, b"".join(_events(reply, body, number)), "text/event-stream")
                else:
                    self._send(200, json.dumps(_message(reply, body, number)).encode(), "application/json")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeMessages":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)


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
