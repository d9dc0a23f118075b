"""The hook registry: hooks are Python classes registered by name, chosen by name in the admin.

    from stash import hooks

    @hooks.register("require_fields")
    class RequireFields(hooks.Filter):
        ...

    hooks.register("require_fields_v2", RequireFields2)   # the same, as a call

A name is registered once: a second registration raises ``AlreadyRegistered``; looking up an
unknown name raises ``NotRegistered``. Rows in the database only ever hold names.
"""

from __future__ import annotations

import re
from typing import Any, Callable, overload

from stash.core.exceptions import AlreadyRegistered, NotRegistered

KINDS = ("filter", "transform", "sink")
_NAME = re.compile(r"^[a-z][a-z0-9_.-]{0,99}$")

_hooks: dict[str, type[Any]] = {}

#: Errors met while discovering hook modules: ``(source, message)``, reported by a system check.
load_errors: list[tuple[str, str]] = []


@overload
def register(name: str, hook: None = None) -> Callable[[type[Any]], type[Any]]: ...
@overload
def register(name: str, hook: type[Any]) -> type[Any]: ...
def register(name: str, hook: type[Any] | None = None) -> Callable[[type[Any]], type[Any]] | type[Any]:
    """Register ``hook`` under ``name``; without ``hook``, return a class decorator that does."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"Invalid hook name {name!r}: use lowercase letters, digits, '_', '.', '-'.")

    def decorator(cls: type[Any]) -> type[Any]:
        if getattr(cls, "kind", None) not in KINDS:
            raise TypeError(f"{cls.__qualname__} is not a hook: subclass Filter, Transform or Sink.")
        if name in _hooks:
            raise AlreadyRegistered(f"A hook named {name!r} is already registered ({_hooks[name].__qualname__}).")
        cls.name = name
        _hooks[name] = cls
        return cls

    return decorator if hook is None else decorator(hook)


def unregister(name: str) -> None:
    """Remove ``name`` from the registry; raises ``NotRegistered`` if it is not there."""
    if name not in _hooks:
        raise NotRegistered(f"No hook named {name!r} is registered.")
    del _hooks[name]


def get(name: str) -> type[Any]:
    """The hook class registered as ``name``; raises ``NotRegistered``."""
    try:
        return _hooks[name]
    except KeyError:
        raise NotRegistered(f"No hook named {name!r} is registered.") from None


def is_registered(name: str) -> bool:
    return name in _hooks


def all() -> list[type[Any]]:  # shadows the builtin on purpose: the registry's public verb, as in DESIGN
    """Every registered hook class, sorted by name."""
    return [_hooks[name] for name in sorted(_hooks)]


# --- secrets: params a hook declares write-only (``writeOnly`` in its schema) -----------------


def secret_keys(name: str, params: Any) -> frozenset[str]:
    """The keys of ``params`` that are secret for hook ``name``: those its schema marks ``writeOnly``.

    Of a hook that is not registered, every key: which ones it would call secret is not known.
    """
    keys = frozenset(params) if isinstance(params, dict) else frozenset()
    return keys & get(name).secret_params() if is_registered(name) else keys


def shown_params(name: str, params: Any) -> Any:
    """``params`` as every face shows them (admin, API, exports): without the secret ones."""
    if not isinstance(params, dict):
        return params
    hidden = secret_keys(name, params)
    return {key: value for key, value in params.items() if key not in hidden}


def keep_secrets(name: str, params: Any, stored: Any) -> Any:
    """``params`` sent back by someone who was never shown the secrets: with ``stored``'s secrets
    added where ``params`` leaves them out. A secret given anew replaces the stored one."""
    if not isinstance(params, dict) or not isinstance(stored, dict):
        return params
    kept = {key: stored[key] for key in secret_keys(name, stored) if key not in params}
    return {**params, **kept}
