"""Exceptions of the hook registry, the hooks and the expressions."""


class StashError(Exception):
    """Base class of stash's own errors."""


class AlreadyRegistered(StashError):
    """A hook name is registered twice."""


class NotRegistered(StashError):
    """A hook name is not in the registry."""


class InvalidParams(StashError):
    """A hook's params break its JSON Schema; ``errors`` maps a field path to its message."""

    def __init__(self, message: str, errors: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or {}


class ExpressionError(StashError):
    """A condition is not a valid, safe expression."""


class HookUnavailable(StashError):
    """A configured hook cannot run: its name is no longer registered or it failed to build."""


class PayloadTooLarge(StashError):
    """A payload is larger than its stash takes (``max_payload_bytes``)."""


class IdempotencyConflict(StashError):
    """An idempotency key was used before with another stash or another payload."""


class StaleConfig(StashError):
    """A change was based on a ``config_version`` of the stash that is no longer current."""


class StashFull(StashError):
    """A stash has ``max_waiting`` items waiting to be judged and takes no more for now;
    ``retry_after``: the seconds to wait before trying again."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class DeliveryRefused(StashError):
    """A sink's delivery failed in a way that retrying will not mend (a refused address, a 4xx
    answer): it is recorded as failed at once, with this message, and not tried again."""
