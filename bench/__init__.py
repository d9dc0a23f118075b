"""The hand-written baseline that `make bench` measures stash against, and the runner (`python -m bench.run`)."""
