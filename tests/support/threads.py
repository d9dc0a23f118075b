"""Work run at once in threads, each on a database connection of its own (closed at its end)."""

import threading

from django.db import connections


def concurrently(work, count=4, timeout=120):
    """Run ``work(seed)`` for seeds 0..count-1, each in a thread; return what they raised (or a
    failure ``work`` reported by returning it), for the main thread to assert on."""
    errors = []

    def run(seed):
        try:
            failure = work(seed)
            if failure is not None:
                errors.append(failure)
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(seed,)) for seed in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    return errors
