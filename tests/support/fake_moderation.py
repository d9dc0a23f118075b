"""A small moderation service on a local port, for the ``moderation_api`` hook's tests and examples.

    with FakeModeration(secret=SECRET) as service:
        service.url                      # http://127.0.0.1:<port>/moderate
        service.feedback_url             # http://127.0.0.1:<port>/feedback
        service.mode = "slow"            # "sync", "slow", "failing", "malformed", or an async mode
        service.requests                 # what it received, in order
        service.answers                  # async modes: each callback it made, with the status answered

In ``sync`` mode it scores each item by a rule on its text: 0.9 when a field holds one of
``BAD_WORDS``, 0.1 otherwise, answered as ``{"items": [{"id", "score", "scores": {"toxic"},
"label"}]}``. ``slow`` answers the same after ``delay`` seconds; ``failing`` answers 500;
``malformed`` answers 200 with text that is not JSON. A request whose ``X-Stash-Signature`` is
not the HMAC-SHA256 of its body with ``secret`` is answered 401 and recorded as unsigned.

Async modes answer ``202`` and then, from a thread, POST each item's answer to its
``callback_url`` (``{"outcome": "drop" | "keep", "reason"}`` by the same rule), signed with
``secret``, after ``callback_delay`` seconds: ``async`` once; ``async_twice`` twice; ``async_late``
after ``delay`` seconds instead; ``async_unsigned`` without a signature; ``async_forged`` signed with
another secret; ``async_silent`` never. ``callback_base`` (e.g. a live server's URL) replaces the
scheme and host of the callback URLs it is given.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

BAD_WORDS = ("awful", "idiot")
ASYNC_MODES = ("async", "async_twice", "async_late", "async_unsigned", "async_forged", "async_silent")
MODES = ("sync", "slow", "failing", "malformed", *ASYNC_MODES)


# Callbacks go straight to the address given, whatever proxy the environment names.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class CallbackMade:
    """One answer the service POSTed to a callback URL, and the status it got."""

    url: str
    body: dict[str, Any]
    status: int


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
        if mode in ASYNC_MODES:
            self.answer(202, b'{"status": "queued"}')
            if mode != "async_silent":
                threading.Thread(target=service.call_back, args=(mode, data["items"]), daemon=True).start()
            return None
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


def async_hook(service: FakeModeration, secret: str, **fields: Any) -> dict[str, Any]:
    """The fields of a HookConfig of ``moderation_api`` in async mode asking ``service`` about
    ``text`` (``make_stash``'s ``hooks`` take it); ``fields`` add to them or replace them."""
    params = {"url": service.url, "secret": secret, "fields": ["text"], "mode": "async", **fields.pop("params", {})}
    return {"hook": "moderation_api", "label": "Vendor", "params": params, **fields}


class FakeModeration:
    """The service, serving in a thread from construction until ``close()``."""

    def __init__(
        self,
        secret: str,
        mode: str = "sync",
        delay: float = 5.0,
        latency: float = 0.0,
        callback_delay: float = 0.05,
        callback_base: str = "",
    ) -> None:
        assert mode in MODES, mode
        self.secret = secret
        self.mode = mode
        self.callback_delay = callback_delay
        self.callback_base = callback_base
        self.answers: list[CallbackMade] = []
        self.answered = threading.Condition()
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

    def call_back(self, mode: str, entries: list[dict[str, Any]]) -> None:
        """Answer each item of an async request at its callback URL, as ``mode`` says."""
        if self.released.wait(self.delay if mode == "async_late" else self.callback_delay):
            return  # closed meanwhile
        for entry in entries:
            scored = score(entry["fields"])
            body = {"outcome": "drop" if scored > 0.5 else "keep", "reason": f"toxic ({scored:g})"}
            for _ in range(2 if mode == "async_twice" else 1):
                self.post_answer(entry["callback_url"], body, mode)

    def post_answer(self, url: str, body: dict[str, Any], mode: str = "async") -> int:
        """POST ``body`` to the callback ``url``, signed as ``mode`` says; the status answered."""
        if self.callback_base:
            parts = urllib.parse.urlsplit(url)
            url = self.callback_base.rstrip("/") + parts.path
        raw = json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if mode != "async_unsigned":
            key = b"another-secret-altogether" if mode == "async_forged" else self.secret.encode()
            headers["X-Stash-Signature"] = "sha256=" + hmac.new(key, raw, hashlib.sha256).hexdigest()
        request = urllib.request.Request(url, data=raw, headers=headers, method="POST")
        try:
            with _DIRECT.open(request, timeout=10) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        except OSError:
            status = 0
        with self.answered:
            self.answers.append(CallbackMade(url, body, status))
            self.answered.notify_all()
        return status

    def wait_for_answers(self, count: int, timeout: float = 20.0) -> list[CallbackMade]:
        """The callbacks made, once there are ``count`` of them (AssertionError after ``timeout``)."""
        with self.answered:
            if not self.answered.wait_for(lambda: len(self.answers) >= count, timeout):
                raise AssertionError(f"{len(self.answers)} callbacks made, not {count}, in {timeout} s")
            return list(self.answers)

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
