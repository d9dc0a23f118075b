"""The CPU one ``submit_many`` of 1,000 items takes, against the hand-written ``bulk_create`` submit,
in this process: the part of the bulk row that happens before any worker sees an item.

    DJANGO_SETTINGS_MODULE=bench.settings SECRET_KEY=any DATABASE_URL=postgres://.../<a bench db> \\
        CELERY_BROKER_URL=redis://127.0.0.1:6379/12 python -m bench.submit_cpu

Migrates the database, then alternates the two, ``CALLS`` calls each, and prints the medians of
``time.process_time()`` (this process's CPU, not the database's) and of the wall clock. The items stay
pending: their messages go to the broker given, which no worker reads.
"""

import statistics
import time

import django


def main(calls=15, size=1000):
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from stash.processing import submit_many

    from .baseline.submitting import submit_many as baseline_submit_many
    from .workload import make_stash, payloads

    stash = make_stash()
    cpu = {"stash": [], "hand-written": []}
    wall = {"stash": [], "hand-written": []}
    for call in range(calls):
        for side, submit in (
            ("stash", lambda batch: submit_many(stash, batch)),
            ("hand-written", baseline_submit_many),
        ):
            batch = payloads(size, size * call)
            started_cpu, started = time.process_time(), time.perf_counter()
            submit(batch)
            cpu[side].append(time.process_time() - started_cpu)
            wall[side].append(time.perf_counter() - started)
    median = {side: statistics.median(times) * 1000 for side, times in cpu.items()}
    clock = {side: statistics.median(times) * 1000 for side, times in wall.items()}
    print(
        f"submit_many ×{size}, median of {calls}: CPU stash {median['stash']:.1f} ms, hand-written "
        f"{median['hand-written']:.1f} ms ({median['stash'] / median['hand-written']:.2f}×); "
        f"wall stash {clock['stash']:.1f} ms, hand-written {clock['hand-written']:.1f} ms"
    )


if __name__ == "__main__":
    main()
