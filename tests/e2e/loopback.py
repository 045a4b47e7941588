"""The loopback HTTP server under each fake model API: records every model request, lets the fake answer."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TRACE = os.environ.get("MEMDIR_E2E_TRACE")  # read at import (each test's environment is cleaned): print each request's time
Answer = tuple[int, bytes, str]  # status, body, content type


class LoopbackAPI:
    """Subclasses answer in `answer(method, path, body)`; `self.requests` keeps the bodies they record."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.errors: list[Exception] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: the test reads fake.requests
                pass

            def do_HEAD(self) -> None:
                self._send((200, b"", "text/plain"))

            def do_GET(self) -> None:
                self._send(fake.answered("GET", self.path, {}))

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                self._send(fake.answered("POST", self.path, body))

            def _send(self, answer: Answer) -> None:
                status, data, kind = answer
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        return 200, b"{}", "application/json"

    def answered(self, method: str, path: str, body: dict[str, Any]) -> Answer:
        """The answer, or a 500 when the script failed (an assertion about the request, say). The failure is
        kept and raised in the test when the fake closes: raised in the handler's thread it only dropped the
        connection, and the test failed later, on what the client made of that."""
        try:
            return self.answer(method, path, body)
        except Exception as exc:
            self.errors.append(exc)
            return 500, json.dumps({"error": {"message": f"the scripted model failed: {exc!r}"}}).encode(), \
                "application/json"

    def record(self, body: dict[str, Any]) -> int:
        """Keep a model request; returns its number (1, 2, ...)."""
        with self._lock:
            self.requests.append(body)
            if TRACE:  # with pytest -s: where a test's time goes, beside the client's own log
                print(f"{time.strftime('%H:%M:%S')}.{int(time.time() * 1000) % 1000:03d} {type(self).__name__} "
                      f"request {len(self.requests)}", flush=True)
            return len(self.requests)

    def __enter__(self) -> "LoopbackAPI":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=10)
        if self.errors:
            raise self.errors[0]
