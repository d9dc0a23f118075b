"""The runner's one error: the benchmark cannot give an honest figure, and says why."""


class BenchError(RuntimeError):
    """An item was not judged, the sides disagree, a request failed, a process or server is missing."""
