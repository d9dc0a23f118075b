"""A hook that hangs inside C code, where no Python signal handler can interrupt it (chaos tests)."""

import ctypes

from stash import hooks


@hooks.register("test_hang_in_c")
class HangInC(hooks.Filter):
    """Block in libc's system("sleep N") when the payload has "hang": true, then keep.

    system() waits for its child and retries that wait when a signal arrives, so the alarm that
    stops a hook at its ``timeout_ms`` is only handled when the call returns.
    """

    params_schema = {
        "type": "object",
        "properties": {"seconds": {"type": "integer", "minimum": 0}},
        "required": ["seconds"],
        "additionalProperties": False,
    }

    def filter(self, item):
        if item.payload.get("hang"):
            ctypes.CDLL(None).system(f"sleep {int(self.params['seconds'])}".encode())
        return self.keep()
