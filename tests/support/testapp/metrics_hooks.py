"""A sink that fails its first deliveries of each item (tests of the delivery counts in /metrics)."""

from django.core.cache import cache

from stash import hooks


@hooks.register("test_flaky_sink")
class FlakySink(hooks.Sink):
    """Delivered by its own task; raises on the first params.failures deliveries of each accepted item.

    Its tries are counted in the cache, which the test process and the worker share.
    """

    deliver_async = True
    params_schema = {
        "type": "object",
        "properties": {"failures": {"type": "integer", "minimum": 0}},
        "required": ["failures"],
        "additionalProperties": False,
    }

    def on_accept(self, item, result):
        key = f"test_flaky_sink:{item.id}"
        cache.add(key, 0, timeout=None)
        tries = cache.incr(key)
        if tries <= self.params["failures"]:
            raise RuntimeError(f"delivery {tries} of {item.id} fails on purpose")
