"""Hooks that misbehave on purpose; discovered like any app's ``stash_hooks`` module."""

import os
import signal
import time

from stash import hooks

# Registered on import: the chaos suite's hook and the flaky sink of the metrics tests.
from . import chaos_hooks, feedback_hooks, metrics_hooks  # noqa: F401


@hooks.register("test_sleep")
class Sleep(hooks.Filter):
    """Sleep for params.seconds when the payload has "sleep": true, then keep."""

    params_schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0}},
        "required": ["seconds"],
        "additionalProperties": False,
    }

    def filter(self, item):
        if item.payload.get("sleep"):
            time.sleep(self.params["seconds"])
        return self.keep()


@hooks.register("test_crash")
class Crash(hooks.Filter):
    """Kill the worker process (SIGKILL) when the payload has "crash": true."""

    params_schema = {"type": "object", "additionalProperties": False}

    def filter(self, item):
        if item.payload.get("crash"):
            os.kill(os.getpid(), signal.SIGKILL)
        return self.keep()


@hooks.register("test_raise")
class Raise(hooks.Filter):
    """Raise RuntimeError when the payload has "raise": true."""

    params_schema = {"type": "object", "additionalProperties": False}

    def filter(self, item):
        if item.payload.get("raise"):
            raise RuntimeError("boom")
        return self.keep()


@hooks.register("test_stuck")
class Stuck(hooks.Filter):
    """Sleep params.seconds in C code, signals blocked, when the payload has "stuck": true.

    The alarm (and SIGUSR1, SIGTERM) stay pending meanwhile: no timeout interrupts it, only killing its process.
    """

    params_schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number", "minimum": 0}},
        "required": ["seconds"],
        "additionalProperties": False,
    }

    def filter(self, item):
        if item.payload.get("stuck"):
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGUSR1, signal.SIGTERM})
            try:
                time.sleep(self.params["seconds"])
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return self.keep()


@hooks.register("test_judged_by")
class JudgedBy(hooks.Transform):
    """Write the name of the Celery worker judging the item into its payload, as "judged_by"."""

    params_schema = {"type": "object", "additionalProperties": False}

    def transform(self, item):
        from celery import current_task

        return {**item.payload, "judged_by": current_task.request.hostname if current_task else None}
