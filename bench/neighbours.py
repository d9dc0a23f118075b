"""The ``slow_neighbour`` row: a fast stash's verdicts while another stash's webhook receiver is slow.

    figures = slow_neighbour(side, ctx.worker, seconds=30, delay=10)

Every ``interval`` s, one save to ``bench-slow`` (the five bench filters and a webhook to a receiver
in this process that answers each POST after ``delay`` s) and one to the stash under test. Its
deliveries go to ``STASH_SINK_QUEUE``, which a sinks worker started for the row consumes, as
production has it; with that setting blank they run among the judging, as they did before, and
the row fails with unjudged items. The row leaves nothing behind: the sinks worker is stopped, the
deliveries still due are dropped with its queue's messages, and the slow stash's items deleted.
"""

import http.server
import threading
import time

from django.conf import settings

from stash.models import HookConfig

from .errors import BenchError
from .processes import SinkWorker
from .scenarios import committed_save, percentiles, purge_queues, queued, verdict_time, wait_judged
from .sides import StashSide
from .workload import make_stash, payload

SLOW_SLUG = "bench-slow"
INTERVAL = 0.5
#: Seconds after the last save by which every fast item must have its verdict, or the row fails.
JUDGED_WITHIN = 30
SECRET = "bench-only-webhook-secret"


def saves(seconds, interval=INTERVAL):
    """Saves to each stash in ``seconds``."""
    return round(seconds / interval)


class SlowReceiver:
    """A webhook receiver on 127.0.0.1 (a thread of this process) that answers each POST after
    ``delay`` s, counting what arrived; ``hurry()`` has it answer at once, ``close()`` stops it."""

    def __init__(self, delay):
        self.delay = delay
        self.arrived = 0
        self.answered = 0
        self.hurried = threading.Event()
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.arrived += 1
                receiver.hurried.wait(receiver.delay)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
                with receiver.lock:
                    receiver.answered += 1

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="slow-receiver", daemon=True
        )
        self.thread.start()

    def url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def hurry(self):
        self.hurried.set()

    def close(self):
        self.hurry()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def make_slow_stash(url):
    """``bench-slow``: the bench stash's five filters, then a webhook to ``url`` (its only sink),
    checked as the admin checks it. The webhook waits 15 s for an answer: the receiver's 10 s pass."""
    stash = make_stash(SLOW_SLUG)
    params = {"url": url, "secret": SECRET, "timeout": 15}
    config = stash.hooks.filter(hook="webhook").first() or HookConfig(stash=stash, hook="webhook", label="webhook")
    config.params = params
    config.full_clean()
    config.save()
    slow = StashSide(make_stash(SLOW_SLUG))
    slow.label = SLOW_SLUG
    return slow


def slow_neighbour(side, worker, seconds, delay, interval=INTERVAL):
    """p50/p95/p99 in ms of ``side``'s save → verdict while ``bench-slow``'s receiver takes ``delay``
    s per delivery; ``due``, ``arrived`` and ``waiting``: the slow stash's deliveries due, arrived at
    the receiver and not yet when the last fast verdict was in. ``worker``: the judging worker (its
    environment and log directory are the sinks worker's). Raises ``BenchError`` if a fast item has
    no verdict ``JUDGED_WITHIN`` s after the last save."""
    receiver = SlowReceiver(delay)
    sink_queue = settings.STASH_SINK_QUEUE
    sinks = SinkWorker(worker.env, sink_queue, worker.log_path.parent) if sink_queue else None
    judged = False
    try:
        slow = make_slow_stash(receiver.url())
        if sinks:
            sinks.start()
        fast = []  # (id, committed)
        started = time.monotonic()
        for n in range(saves(seconds, interval)):
            time.sleep(max(0.0, started + n * interval - time.monotonic()))
            committed_save(slow, payload(n))
            fast.append(committed_save(side, payload(n)))
        wait_fast(side, slow, receiver, len(fast))
        waits = [verdict_time(side, pk) - committed for pk, committed in fast]
        wait_judged(slow, len(fast), stall=JUDGED_WITHIN)
        due = slow.items().count()  # the webhook's default events: a delivery for every verdict
        arrived = receiver.arrived
        judged = True
    finally:
        receiver.hurry()  # what is still waiting on it is answered now, and what comes next at once
        if sinks:
            sinks.stop()
            purge_queues([sink_queue])
        elif judged:
            worker.wait_idle(lambda: queued(worker.queues))  # the deliveries among the judging: answered at once now
        receiver.close()
    slow.clear()
    return {**percentiles(waits), "saves": len(fast), "due": due, "arrived": arrived, "waiting": due - arrived}


def wait_fast(side, slow, receiver, count):
    """Wait until every fast item has its verdict; ``BenchError`` ``JUDGED_WITHIN`` s after the last save."""
    deadline = time.monotonic() + JUDGED_WITHIN
    while (left := side.undecided().count()) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        raise BenchError(
            f"slow_neighbour: {left} of {count} items of the fast stash without a verdict "
            f"{JUDGED_WITHIN} s after the last save, while {slow.label}'s receiver answers after "
            f"{receiver.delay:g} s ({receiver.arrived} of its deliveries arrived; STASH_SINK_QUEUE "
            f"{settings.STASH_SINK_QUEUE or '(blank)'})"
        )
