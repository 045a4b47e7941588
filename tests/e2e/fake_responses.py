"""A loopback stand-in for the OpenAI Responses API (POST /v1/responses, streamed): records every
request, answers from a script. The real Codex CLI talks to it through a model provider's base_url."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Reply = dict[str, Any]  # {"text": str} or {"tool": name, "input": {...}, "namespace": ns (optional)}
Script = Callable[[dict[str, Any]], Reply]


class FakeResponses:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._ids = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.paths.append("GET " + self.path)
                self._send(200, b'{"object": "list", "data": []}', "application/json")

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                fake.paths.append("POST " + self.path)
                if not self.path.rstrip("/").endswith("/responses"):
                    self._send(404, b'{"error": {"message": "not faked"}}', "application/json")
                    return
                with fake._lock:
                    fake.requests.append(body)
                    fake._ids += 1
                    number = fake._ids
                self._send(200, b"".join(_events(fake.script(body), number)), "text/event-stream")

            def _send(self, status: int, data: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeResponses":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)


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
              {"type": "response.output_item.added", "output_index": 0, "item": item},
              {"type": "response.output_item.done", "output_index": 0, "item": item},
              {"type": "response.completed", "response": response}]
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def texts(request: dict[str, Any]) -> str:
    """Everything a request shows the model: instructions, every message's text, every tool output."""
    parts = [request.get("instructions") or ""]
    for item in request.get("input", []):
        if item.get("type") == "function_call_output":
            output = item.get("output")
            parts.append(output if isinstance(output, str) else json.dumps(output))
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
