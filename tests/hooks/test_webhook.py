"""The webhook sink against a real local HTTP server: signature, retries, refusals, DNS rebinding."""

import hashlib
import hmac
import http.server
import json
import logging
import socket
import ssl
import subprocess
import threading
import time
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError

from stash import processing, tasks
from stash.core import registry
from stash.core.exceptions import DeliveryRefused, InvalidParams
from stash.core.pipeline import Item, Result, TrailEntry
from stash.core.testing import build_hook, send_event
from stash.hooks import netguard
from stash.hooks.webhook import WebhookError, signature
from stash.models import Content, Delivery, HookConfig

from ..support.hook_support import assert_refused, closed_port

SECRET = "a-shared-secret-of-some-length"
LOOPBACK = ["127.0.0.1/32"]


# How long a connection to the receiver may stay silent (its TLS handshake, its request) before
# the receiver drops it; close() does not wait for it, it cuts every connection still open.
CONNECTION_TIMEOUT = 2.0
# How long close() may take in all.
CLOSE_TIMEOUT = 5.0


class _Server(http.server.ThreadingHTTPServer):
    """A threading HTTP server whose connections each run in a thread of their own, TLS handshake
    included (never in the accept loop, where one silent client would stop all the others and
    hold ``shutdown()``), with a timeout, and can all be cut at once."""

    def __init__(self, handler, tls):
        self.tls = tls
        self.connections = set()
        self.threads = []
        self.cut = False
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), handler)

    def process_request(self, request, client_address):
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True)
        with self.lock:
            self.threads.append(thread)
        thread.start()

    def finish_request(self, request, client_address):
        request.settimeout(CONNECTION_TIMEOUT)
        if self.tls is not None:
            request = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        with self.lock:
            if self.cut:
                self.shutdown_request(request)
                return
            self.connections.add(request)
        try:
            if self.tls is not None:
                request.do_handshake()
            super().finish_request(request, client_address)
        finally:
            with self.lock:
                self.connections.discard(request)
            self.shutdown_request(request)

    def handle_error(self, request, client_address):
        """A client that hangs up, fails its handshake or is cut by ``close()`` fails no test: the
        tests check what was received."""

    def cut_connections(self):
        """Cut every open connection, and any that a thread has yet to start on."""
        with self.lock:
            self.cut = True
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked reading from it
            except OSError:
                pass  # closed meanwhile


class Receiver:
    """A local HTTP(S) server that records each request and answers with the statuses it is given.

    ``close()`` is prompt and bounded whatever the clients do: it stops the accept loop, wakes a
    ``delay`` still waiting, cuts every open connection and joins every thread within
    ``CLOSE_TIMEOUT``, or fails.
    """

    def __init__(self, statuses=(200,), delay=0.0, tls=None, drip=None):
        self.statuses = list(statuses)
        self.delay = delay
        self.drip = drip  # seconds between the bytes of an answer sent a byte at a time
        self.requests = []
        self.closing = threading.Event()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body, "at": time.monotonic()}
                )
                if receiver.closing.wait(receiver.delay):
                    return
                status = receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
                if receiver.drip is not None:
                    for byte in f"HTTP/1.1 {status} OK\r\nContent-Length: 2\r\n\r\nok".encode():
                        if receiver.closing.wait(receiver.drip):
                            return
                        self.wfile.write(bytes([byte]))
                    return
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = _Server(Handler, tls)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def url(self, host="127.0.0.1", scheme="http", path="/hook"):
        return f"{scheme}://{host}:{self.port}{path}"

    def close(self):
        if self.closing.is_set():
            return
        self.closing.set()
        deadline = time.monotonic() + CLOSE_TIMEOUT
        self.server.shutdown()
        self.server.server_close()
        self.server.cut_connections()
        for thread in [self.thread, *self.server.threads]:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
            assert not thread.is_alive(), f"the receiver's thread {thread.name} still runs after {CLOSE_TIMEOUT} s"


@pytest.fixture
def receiver():
    servers = []

    def start(*args, **kwargs):
        servers.append(Receiver(*args, **kwargs))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def allow_loopback(settings):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = LOOPBACK


def item(**fields):
    return Item(payload={"text": "hello", "n": 1}, id="c0ffee", stash="audit", revision=2, source="api", **fields)


def accepted():
    trail = (TrailEntry(hook="require_fields", label="Needs text", config_id=3, position=1, outcome="kept"),)
    return Result(verdict="accepted", payload={"text": "hello", "n": 1}, trail=trail)


# --- what is posted ---------------------------------------------------------------------------


def test_posts_the_verdict_and_item_as_json_with_a_verifiable_signature(receiver, allow_loopback):
    server = receiver()

    build_hook("webhook", {"url": server.url(), "secret": SECRET}).on_accept(item(), accepted())

    [request] = server.requests
    body, headers = request["body"], request["headers"]
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Stash-Signature"], expected)
    assert headers["Content-Type"] == "application/json"
    assert (headers["X-Stash-Event"], headers["X-Stash-Delivery"]) == ("accept", "c0ffee:2:accept")
    assert request["path"] == "/hook"
    data = json.loads(body)
    assert data == {
        "event": "accept",
        "verdict": "accepted",
        "reason": "",
        "item": {
            "id": "c0ffee",
            "stash": "audit",
            "revision": 2,
            "source": "api",
            "submitted_by": None,
            "created_at": None,
            "payload": {"text": "hello", "n": 1},
        },
        "trail": [
            {
                "config_id": 3,
                "hook": "require_fields",
                "label": "Needs text",
                "position": 1,
                "outcome": "kept",
                "code": "",
                "message": "",
                "duration_ms": 0.0,
                "would": "",
            }
        ],
    }


def test_a_tampered_body_does_not_verify():
    body = b'{"verdict":"accepted"}'

    assert signature(SECRET, body) != signature(SECRET, body.replace(b"accepted", b"rejected"))
    assert signature(SECRET, body) != signature(SECRET + "x", body)


def test_the_query_string_is_kept_and_events_narrow_what_is_sent(receiver, allow_loopback):
    server = receiver()
    params = {"url": server.url(path="/in?team=ops"), "secret": SECRET, "events": ["reject"]}

    assert send_event("webhook", params, "on_accept", {"text": "x"}) is False
    assert send_event("webhook", params, "on_reject", {"text": "x"}, verdict="rejected", reason="spam") is True

    [request] = server.requests
    assert request["path"] == "/in?team=ops"
    assert json.loads(request["body"])["reason"] == "spam"


# --- failures: retried or not -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "phrase"), [(500, "Internal Server Error"), (503, "Service Unavailable"), (429, "Too Many Requests")]
)
def test_5xx_and_429_raise_so_the_task_retries(receiver, allow_loopback, status, phrase):
    server = receiver([status])

    with pytest.raises(WebhookError, match=rf"^POST {server.url()} answered {status} {phrase}$"):
        build_hook("webhook", {"url": server.url(), "secret": SECRET}).on_accept(item(), accepted())


@pytest.mark.parametrize(
    ("status", "phrase"), [(400, "Bad Request"), (404, "Not Found"), (410, "Gone"), (302, "Found")]
)
def test_4xx_and_redirects_are_refused_for_good(receiver, allow_loopback, status, phrase):
    server = receiver([status])

    with pytest.raises(DeliveryRefused, match=rf"^POST {server.url()} answered {status} {phrase}$"):
        build_hook("webhook", {"url": server.url(), "secret": SECRET}).on_accept(item(), accepted())

    assert len(server.requests) == 1


def test_a_connection_refused_raises_to_be_retried(allow_loopback):
    url = f"http://127.0.0.1:{closed_port()}/hook"

    with pytest.raises(WebhookError, match=rf"^POST {url} failed: ConnectionRefusedError"):
        build_hook("webhook", {"url": url, "secret": SECRET}).on_accept(item(), accepted())


def test_a_slow_receiver_times_out_and_is_retried(receiver, allow_loopback):
    server = receiver(delay=5.0)
    started = time.monotonic()

    with pytest.raises(WebhookError, match=r"failed: (TimeoutError|socket.timeout): timed out"):
        build_hook("webhook", {"url": server.url(), "secret": SECRET, "timeout": 0.2}).on_accept(item(), accepted())
    assert time.monotonic() - started < 3  # the receiver would have taken 5 s


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_receiver_that_drips_its_answer_is_cut_off_at_twice_the_timeout(receiver, tls, allow_loopback, scheme):
    # Each byte comes well within the timeout (0.5 s), but the whole answer would take 8 s.
    server = receiver(drip=0.2, tls=tls if scheme == "https" else None)
    url = server.url(host="localhost" if scheme == "https" else "127.0.0.1", scheme=scheme)
    started = time.monotonic()

    with pytest.raises(WebhookError, match=rf"^POST {url} failed: TimeoutError: no complete answer within 1 s$"):
        build_hook("webhook", {"url": url, "secret": SECRET, "timeout": 0.5}).on_accept(item(), accepted())
    assert 1 <= time.monotonic() - started < 2.5
    assert len(server.requests) == 1


def test_a_receiver_that_answers_within_the_deadline_is_not_cut_off(receiver, allow_loopback):
    server = receiver(drip=0.01)  # the answer takes about 0.4 s, under 2 x 0.5 s

    build_hook("webhook", {"url": server.url(), "secret": SECRET, "timeout": 0.5}).on_accept(item(), accepted())

    assert len(server.requests) == 1


# --- through the delivery task, as a worker runs it -------------------------------------------


@pytest.fixture
def delivery(make_stash, allow_loopback):
    """An accepted item in a stash whose webhook sink posts to ``url``: returns a function to deliver it."""

    def setup(url, **params):
        stash = make_stash("audit", hooks=[{"hook": "webhook", "params": {"url": url, "secret": SECRET, **params}}])
        content = Content.objects.create(stash=stash, payload={"text": "hello"})
        report = processing.judge([content.pk])
        [delivery] = report.deliveries
        assert (delivery.content_id, delivery.event) == (str(content.pk), "on_accept")
        return lambda: tasks.deliver_sink.apply(args=delivery.args)

    return setup


def delivery_row():
    [row] = Delivery.objects.all()
    return row


@pytest.mark.django_db
def test_the_task_retries_5xx_until_the_receiver_answers(receiver, delivery):
    server = receiver([503, 502, 200])

    result = delivery(server.url())()

    assert result.state == "SUCCESS"
    assert len(server.requests) == 3
    assert len({r["headers"]["X-Stash-Delivery"] for r in server.requests}) == 1  # the same delivery each time
    assert json.loads(server.requests[-1]["body"])["item"]["payload"] == {"text": "hello"}
    row = delivery_row()
    assert (row.status, row.attempts, row.event) == ("delivered", 3, "on_accept")
    assert row.last_error == f"WebhookError: POST {server.url()} answered 502 Bad Gateway"  # the last one, kept
    assert row.delivered_at is not None


@pytest.mark.django_db
def test_a_delivery_is_recorded_pending_when_sent_and_retrying_after_a_failure(receiver, delivery):
    server = receiver([503, 200])
    deliver = delivery(server.url())
    row = delivery_row()
    assert (row.status, row.attempts, row.last_error, row.delivered_at) == ("pending", 0, "", None)

    with pytest.raises(processing.DeliveryError):
        processing.deliver(row.config_id, row.content_id, row.event, row.revision)

    row.refresh_from_db()
    assert (row.status, row.attempts) == ("retrying", 1)
    assert row.last_error == f"WebhookError: POST {server.url()} answered 503 Service Unavailable"
    assert deliver().state == "SUCCESS"
    row.refresh_from_db()
    assert (row.status, row.attempts) == ("delivered", 2)


@pytest.mark.django_db
def test_the_task_gives_up_after_its_retries_on_a_receiver_that_keeps_failing(receiver, delivery):
    server = receiver([500])

    result = delivery(server.url())()

    assert result.state == "FAILURE"
    assert len(server.requests) == 1 + tasks.deliver_sink.max_retries
    assert str(result.result) == f"WebhookError: POST {server.url()} answered 500 Internal Server Error"
    row = delivery_row()
    assert (row.status, row.attempts, row.delivered_at) == ("failed", 1 + tasks.deliver_sink.max_retries, None)
    assert row.last_error == f"WebhookError: POST {server.url()} answered 500 Internal Server Error"


@pytest.mark.django_db
def test_the_task_does_not_retry_a_4xx(receiver, delivery, caplog):
    server = receiver([404])

    with caplog.at_level(logging.ERROR, logger="stash.processing.delivering"):
        result = delivery(server.url())()

    assert result.state == "SUCCESS"
    assert len(server.requests) == 1
    assert any("not retried: POST " in m and m.endswith("answered 404 Not Found") for m in caplog.messages)
    row = delivery_row()
    assert (row.status, row.attempts) == ("failed", 1)
    assert row.last_error == f"POST {server.url()} answered 404 Not Found"


@pytest.mark.django_db
def test_a_rejected_item_is_not_sent_to_a_webhook_for_accepts_only(receiver, make_stash, allow_loopback):
    server = receiver()
    stash = make_stash(
        "audit",
        hooks=[
            ("require_fields", {"fields": ["text"]}),
            {"hook": "webhook", "params": {"url": server.url(), "secret": SECRET, "events": ["accept"]}},
        ],
    )
    content = Content.objects.create(stash=stash, payload={"title": "no text"})

    report = processing.judge([content.pk])

    assert report.verdicts == {"rejected": 1}
    assert report.deliveries == []


# --- refused addresses ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("fd00:ec2::254", "cloud metadata"),
        ("100.100.100.200", "cloud metadata"),
        ("100.64.0.1", "not public"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:7f00:1::", "loopback"),
        ("192.0.2.1", "private"),
        ("240.0.0.1", "private"),
    ],
)
def test_why_blocked(address, reason):
    assert netguard.why_blocked(address) == reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_not_blocked(address):
    assert netguard.why_blocked(address) is None


def test_an_allowlisted_network_is_not_blocked():
    allowed = netguard.parse_networks(["10.0.0.0/8", "127.0.0.1"])

    assert netguard.why_blocked("10.20.30.40", allowed) is None
    assert netguard.why_blocked("127.0.0.1", allowed) is None
    assert netguard.why_blocked("127.0.0.2", allowed) == "loopback"
    assert netguard.why_blocked("::ffff:10.0.0.1", allowed) is None


def test_bad_allowlist_entries_are_named():
    with pytest.raises(ValueError, match=r"^'10.0.0.0/33' is not an IP address or network \(e.g. 10.0.0.0/8\)$"):
        netguard.parse_networks(["10.0.0.0/8", "10.0.0.0/33"])


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1/hook", "127.0.0.1 is a loopback address"),
        ("http://10.1.2.3/hook", "10.1.2.3 is a private address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
        ("http://[::1]:8080/hook", "::1 is a loopback address"),
    ],
)
def test_literal_blocked_addresses_are_refused_when_saved(url, why):
    with pytest.raises(
        InvalidParams,
        match=rf"^Invalid params for hook 'webhook': url: {why}; allow it with "
        r"STASH_WEBHOOK_ALLOWED_NETWORKS$",
    ):
        build_hook("webhook", {"url": url, "secret": SECRET})


def test_a_literal_address_is_accepted_when_allowlisted(settings):
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8"]

    build_hook("webhook", {"url": "http://10.1.2.3/hook", "secret": SECRET})


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://127.0.0.1:{port}/hook", "127.0.0.1 resolves only to addresses that are refused: 127.0.0.1 (loopback)"),
        ("http://10.1.2.3:{port}/hook", "10.1.2.3 resolves only to addresses that are refused: 10.1.2.3 (private)"),
        (
            "http://169.254.169.254:{port}/latest",
            ("169.254.169.254 resolves only to addresses that are refused: 169.254.169.254 (cloud metadata)"),
        ),
        ("http://localhost:{port}/hook", "localhost resolves only to addresses that are refused: 127.0.0.1 (loopback)"),
    ],
)
def test_without_the_allowlist_delivery_refuses_and_records_why(receiver, caplog, url, why):
    server = receiver()
    url = url.format(port=server.port)
    hook = registry.get("webhook")({"url": url, "secret": SECRET})  # as if saved while allowlisted
    started = time.monotonic()

    with pytest.raises(DeliveryRefused) as refused:  # not retried
        hook.on_accept(item(), accepted())

    assert time.monotonic() - started < 5  # refused before any connection is tried
    assert server.requests == []
    message = str(refused.value)
    assert message.startswith(f"POST {url} refused: {why}")
    assert message.endswith("allow them with STASH_WEBHOOK_ALLOWED_NETWORKS")


@pytest.mark.django_db
def test_the_task_does_not_retry_a_refused_address(receiver, delivery, settings, caplog):
    server = receiver()
    deliver = delivery(server.url(host="localhost"))
    settings.STASH_WEBHOOK_ALLOWED_NETWORKS = []

    with caplog.at_level(logging.ERROR, logger="stash.processing.delivering"):
        result = deliver()

    assert result.state == "SUCCESS"
    assert server.requests == []
    assert sum("refused: localhost resolves only to addresses that are refused" in m for m in caplog.messages) == 1
    assert delivery_row().status == "failed"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "example.com/hook",
        "http:///nohost",
        "http://a:b@example.com/",
        "http://example.com:99999/",
    ],
)
def test_urls_that_cannot_be_used_are_refused(url):
    with pytest.raises(InvalidParams, match=r"^Invalid params for hook 'webhook': url: "):
        build_hook("webhook", {"url": url, "secret": SECRET})


@pytest.mark.parametrize(
    ("params", "errors"),
    [
        ({"url": "https://example.com/"}, {"secret": "This field is required."}),
        ({"url": "https://example.com/", "secret": "short"}, {"secret": "Must be at least 16 characters."}),
        ({"url": "https://example.com/", "secret": SECRET, "timeout": 0}, {"timeout": "Must be more than 0."}),
        ({"url": "https://example.com/", "secret": SECRET, "timeout": 60}, {"timeout": "Must be at most 30."}),
        (
            {"url": "https://example.com/", "secret": SECRET, "headers": {"X": "1"}},
            {"params": "Not a param of this hook: headers."},
        ),
    ],
)
def test_webhook_refuses_bad_params(params, errors):
    assert_refused("webhook", params, errors)


# --- DNS rebinding ----------------------------------------------------------------------------


@pytest.fixture
def rebinding_dns(monkeypatch):
    """Makes "rebind.test" resolve to 127.0.0.1 once, then to the metadata address: a rebinding attack."""
    answers = ["127.0.0.1"]
    lookups = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host != "rebind.test":
            return real(host, port, *args, **kwargs)
        lookups.append(host)
        address = answers.pop(0) if answers else "169.254.169.254"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return SimpleNamespace(answers=answers, lookups=lookups)


def test_the_connection_goes_to_the_address_that_was_checked(receiver, allow_loopback, rebinding_dns):
    server = receiver()

    build_hook("webhook", {"url": server.url(host="rebind.test"), "secret": SECRET}).on_accept(item(), accepted())

    assert rebinding_dns.lookups == ["rebind.test"]  # resolved once: the second answer is never asked for
    [request] = server.requests
    assert request["headers"]["Host"] == f"rebind.test:{server.port}"


def test_a_name_that_rebinds_to_a_blocked_address_never_reaches_it(receiver, allow_loopback, rebinding_dns):
    server = receiver()
    rebinding_dns.answers.clear()  # the first answer was given to an earlier check: now the metadata address
    hook = build_hook("webhook", {"url": server.url(host="rebind.test"), "secret": SECRET})

    with pytest.raises(DeliveryRefused, match=r"rebind\.test resolves only to addresses that are refused: 169\.254"):
        hook.on_accept(item(), accepted())

    assert server.requests == []


# --- HTTPS: the certificate is checked against the name, on the pinned address ----------------


@pytest.fixture
def tls(tmp_path, monkeypatch):
    """A server's TLS context for "localhost", whose certificate is the only one the client trusts."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this certificate only
    return context


@pytest.fixture
def tls_receiver(receiver, tls):
    return receiver(tls=tls)


def test_https_to_the_pinned_address_verifies_the_certificate_for_the_name(tls_receiver, allow_loopback):
    url = tls_receiver.url(host="localhost", scheme="https")

    build_hook("webhook", {"url": url, "secret": SECRET}).on_accept(item(), accepted())

    assert len(tls_receiver.requests) == 1


def test_https_to_a_name_the_certificate_does_not_cover_fails_and_is_retried(
    tls_receiver, allow_loopback, rebinding_dns
):
    url = tls_receiver.url(host="rebind.test", scheme="https")

    with pytest.raises(WebhookError, match="SSLCertVerificationError"):
        build_hook("webhook", {"url": url, "secret": SECRET}).on_accept(item(), accepted())
    assert tls_receiver.requests == []


# --- saved configurations ---------------------------------------------------------------------


@pytest.mark.django_db
def test_a_hook_config_with_a_blocked_url_is_refused_with_the_reason(make_stash):
    stash = make_stash("audit")

    with pytest.raises(ValidationError, match=r"url: 169\.254\.169\.254 is a cloud metadata address"):
        HookConfig.objects.create(
            stash=stash, hook="webhook", params={"url": "http://169.254.169.254/latest/meta-data/", "secret": SECRET}
        )


# --- the test receiver itself -----------------------------------------------------------------


def test_a_client_that_never_finishes_its_handshake_holds_neither_deliveries_nor_shutdown(tls_receiver, allow_loopback):
    silent = socket.create_connection(("127.0.0.1", tls_receiver.port))  # connects, never says hello
    try:
        url = tls_receiver.url(host="localhost", scheme="https")
        build_hook("webhook", {"url": url, "secret": SECRET, "timeout": 2}).on_accept(item(), accepted())
        assert len(tls_receiver.requests) == 1

        closing = threading.Thread(target=tls_receiver.close)
        started = time.monotonic()
        closing.start()
        closing.join(timeout=5)
        assert not closing.is_alive(), "the receiver's shutdown waited on the silent client"
        assert time.monotonic() - started < 1
    finally:
        silent.close()
