"""The runner of `make bench` (`python -m bench.run`), and in ``bench.baseline`` the hand-written app it measures
stash against."""
