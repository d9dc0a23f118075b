"""Helpers shared by the hook tests: params a hook refuses, a port nothing listens on."""

import socket

import pytest

from stash.core import registry
from stash.core.exceptions import InvalidParams


def assert_refused(hook, params, errors):
    """``params`` are refused by the hook registered as ``hook``, with exactly ``errors`` (a message per field)."""
    with pytest.raises(InvalidParams, match=f"^Invalid params for hook '{hook}': ") as caught:
        registry.get(hook).validate_params(params)

    assert caught.value.errors == errors, caught.value.errors


def closed_port():
    """A local TCP port that nothing listens on (connecting to it is refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
