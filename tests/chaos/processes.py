"""The processes a chaos scenario owns: a Redis server it may stop, restart or flush, and workers."""

import os
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import redis

from ..support.worker import Worker

REDIS_SERVER = "/usr/bin/redis-server"
# Claims and unclaimed items lapse after this many seconds; the scenarios sweep every second,
# so a lost message or a dead worker's batch is sent again within a few seconds.
LEASE_SECONDS = 3


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A ``redis-server`` of our own on a free port, without persistence: stopping it loses everything."""

    def __init__(self, log_dir):
        self.port = free_port()
        self.log_path = Path(log_dir) / f"redis-{self.port}.log"
        self.process = None

    @property
    def url(self):
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        return redis.Redis(port=self.port, socket_timeout=5)

    def as_cache(self, settings):
        """``CACHES`` with this server as the cache, as the settings make it for ``CACHE_URL``."""
        return {
            "default": {
                "BACKEND": "django_redis.cache.RedisCache",
                "LOCATION": self.url,
                "KEY_PREFIX": "stash",
                "OPTIONS": settings.REDIS_CACHE_OPTIONS,
            }
        }

    def start(self, timeout=20):
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(
                [
                    REDIS_SERVER,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--daemonize",
                    "no",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start:\n{self.log_path.read_text()}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(20)

    @contextmanager
    def full(self):
        """Inside the block its memory is capped just above what it holds, under ``noeviction``,
        and filled to the cap: every write is refused (``OutOfMemoryError``). Emptied after."""
        client = self.client()
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", client.info("memory")["used_memory"] + 256 * 1024)
        try:
            for n in range(100_000):
                client.set(f"filler:{n}", "x" * 1024)
            raise RuntimeError("redis-server took 100 MB past its maxmemory")
        except redis.ResponseError as exc:
            if "maxmemory" not in str(exc):
                raise
        try:
            yield self
        finally:
            client.config_set("maxmemory", 0)
            client.flushall()

    @contextmanager
    def stopped(self):
        """The broker is down inside the block and back up after it."""
        self.stop()
        try:
            yield
        finally:
            self.start()


class ChaosWorker(Worker):
    """A test worker with the chaos lease, on the given broker (default: the configured one)."""

    def env(self):
        env = super().env()
        env["STASH_LEASE_SECONDS"] = str(LEASE_SECONDS)
        return env

    def ensure_running(self):
        if self.process is None or self.process.poll() is not None:
            if self.process is not None:
                self.log.close()
            self.log_path.write_text("")
            self.start()
        return self

    def terminate(self, timeout=60):
        """SIGTERM to the main process only, as ``kill <pid>`` or ``celery multi stop`` sends it: a warm
        shutdown that finishes the running tasks. Returns the exit code."""
        os.kill(self.process.pid, signal.SIGTERM)
        code = self.process.wait(timeout)
        self.log.close()
        return code
