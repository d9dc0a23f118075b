"""A small moderation service on a local port, for the ``moderation_api`` hook's tests and examples.

    with FakeModeration(secret=SECRET) as service:
        service.url                      # http://127.0.0.1:<port>/moderate
        service.feedback_url             # http://127.0.0.1:<port>/feedback
        service.mode = "slow"            # "sync", "slow", "failing" or "malformed"
        service.requests                 # what it received, in order

In ``sync`` mode it scores each item by a rule on its text: 0.9 when a field holds one of
``BAD_WORDS``, 0.1 otherwise, answered as ``{"items": [{"id", "score", "scores": {"toxic"},
"label"}]}``. ``slow`` answers the same after ``delay`` seconds; ``failing`` answers 500;
``malformed`` answers 200 with text that is not JSON. A request whose ``X-Stash-Signature`` is
not the HMAC-SHA256 of its body with ``secret`` is answered 401 and recorded as unsigned.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
from dataclasses import dataclass, field
from typing import Any

BAD_WORDS = ("awful", "idiot")
MODES = ("sync", "slow", "failing", "malformed")


@dataclass
class Received:
    """One request the service received."""

    path: str
    headers: dict[str, str]
    body: bytes
    signed: bool
    data: Any = field(default=None)


def score(fields: dict[str, Any]) -> float:
    """The fake service's rule: 0.9 if any text of ``fields`` holds a bad word, else 0.1."""
    text = json.dumps(fields, ensure_ascii=False).lower()
    return 0.9 if any(word in text for word in BAD_WORDS) else 0.1


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet test output

    def do_POST(self) -> None:
        service = self.server.service
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        expected = "sha256=" + hmac.new(service.secret.encode(), body, hashlib.sha256).hexdigest()
        signed = hmac.compare_digest(expected, self.headers.get("X-Stash-Signature", ""))
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        with service.lock:
            service.requests.append(Received(self.path, dict(self.headers), body, signed, data))
        if not signed:
            return self.answer(401, b'{"error": "bad signature"}')
        if self.path.startswith("/feedback"):
            return self.answer(204, b"")
        mode = service.mode
        if mode == "failing":
            return self.answer(500, b'{"error": "down"}')
        if mode == "malformed":
            return self.answer(200, b"<html>not json</html>")
        if mode == "slow":
            service.released.wait(service.delay)
        if service.latency:
            service.released.wait(service.latency)
        items = [
            {
                "id": entry["id"],
                "score": score(entry["fields"]),
                "scores": {"toxic": score(entry["fields"])},
                "label": "toxic" if score(entry["fields"]) > 0.5 else "ok",
            }
            for entry in data["items"]
        ]
        self.answer(200, json.dumps({"items": items}).encode())

    def answer(self, status: int, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up (a timeout test): nothing to answer


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a slow answer never holds close()

    def __init__(self, service: FakeModeration) -> None:
        self.service = service
        super().__init__(("127.0.0.1", 0), _Handler)


class FakeModeration:
    """The service, serving in a thread from construction until ``close()``."""

    def __init__(self, secret: str, mode: str = "sync", delay: float = 5.0, latency: float = 0.0) -> None:
        assert mode in MODES, mode
        self.secret = secret
        self.mode = mode
        self.delay = delay  # seconds a "slow" answer takes
        self.latency = latency  # seconds every scoring answer takes (benchmarks)
        self.requests: list[Received] = []
        self.lock = threading.Lock()
        self.released = threading.Event()
        self.server = _Server(self)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True, name="fake-moderation"
        )
        self.thread.start()

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return f"{self.base}/moderate"

    @property
    def feedback_url(self) -> str:
        return f"{self.base}/feedback"

    def close(self) -> None:
        self.released.set()  # ends any slow answer at once
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def __enter__(self) -> FakeModeration:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
