"""The hand-written baseline that `make bench` measures stash against: a Django app (label ``bench``).

A model (``Item``), Celery tasks that judge items with the same five checks in plain Python, and one
DRF view (``POST /bench/items/``), written the way a good engineer would. Installed only where
benchmarks run: ``bench.settings`` and ``tests.settings``.
"""
