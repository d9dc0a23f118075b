"""Safe conditions: CEL (Common Expression Language) expressions over ``payload`` and ``meta``.

    check = compile_condition('has(payload.data) && payload.data.probability > 0.5')
    check({"payload": {...}, "meta": {...}})     # -> True / False

CEL is not Turing-complete and has no access to Python: no imports, attributes or calls
beyond its own functions. An expression is parsed and checked when it is saved; an invalid,
oversized or unsafe one raises ``ExpressionError`` with a clear message. ``eval`` is never used.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

import celpy
from celpy.celparser import CELParseError
from lark import Token, Tree

from .exceptions import ExpressionError

logger = logging.getLogger(__name__)

MAX_LENGTH = 1000
VARIABLES = frozenset({"payload", "meta"})
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_environment = celpy.Environment()
# CEL's own global functions, the only ones a condition may call.
FUNCTIONS = frozenset(
    {"has", "dyn", "size", "contains", "startsWith", "endsWith", "matches", "type", "bool", "bytes",
     "double", "duration", "int", "list", "map", "string", "timestamp", "uint"}
)


def compile_condition(text: str) -> Callable[[Mapping[str, Any]], bool]:
    """Compile ``text`` into a predicate over ``{"payload": ..., "meta": ...}``.

    Raises ``ExpressionError`` if the text is too long, does not parse, or reads a name other
    than ``payload`` and ``meta``. The predicate raises ``ExpressionError`` if evaluation fails
    (a missing field, a type mismatch) or does not give a boolean.
    """
    text = (text or "").strip()
    if not text:
        raise ExpressionError("The condition is empty.")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"The condition is {len(text)} characters long; the limit is {MAX_LENGTH}.")
    try:
        tree = _environment.compile(text)
    except CELParseError as exc:
        raise ExpressionError(f"The condition does not parse: {str(exc).splitlines()[0]}") from exc
    calls = sorted(_calls(tree) - FUNCTIONS)
    if calls:
        raise ExpressionError(f"The condition calls unknown function(s) {', '.join(calls)}.")
    unknown = sorted(_names(tree) - VARIABLES - _bound_names(tree))
    if unknown:
        raise ExpressionError(
            f"The condition reads unknown name(s) {', '.join(unknown)}: only payload and meta are available."
        )
    program = _environment.program(tree)

    def predicate(context: Mapping[str, Any]) -> bool:
        activation = {key: celpy.json_to_cel(value) for key, value in context.items()}
        try:
            value = program.evaluate(activation)
        except Exception as exc:
            raise ExpressionError(f"condition failed: {_message(exc)}") from exc
        if isinstance(value, Exception):  # celpy returns some errors as values
            raise ExpressionError(f"condition failed: {_message(value)}")
        if not isinstance(value, (bool, celpy.celtypes.BoolType)):
            raise ExpressionError(f"condition gave {type(value).__name__}, not true or false")
        return bool(value)

    return predicate


def validate_condition(text: str) -> None:
    """Raise ``ExpressionError`` if ``text`` is not a valid condition."""
    compile_condition(text)


def _message(exc: Exception) -> str:
    text = str(exc.args[0]) if exc.args else str(exc)
    return text.split(" (in activation")[0]


def _calls(tree: Tree) -> set[str]:
    """Functions called as ``name(...)`` (methods such as ``s.contains(x)`` are CEL's own)."""
    return {str(node.children[0]) for node in tree.iter_subtrees()
            if node.data == "ident_arg" and node.children and isinstance(node.children[0], Token)}


def _names(tree: Tree) -> set[str]:
    """Top-level identifiers the expression reads."""
    names = set()
    for node in tree.iter_subtrees():
        if node.data == "ident":
            names.update(str(child) for child in node.children if isinstance(child, Token))
    return names


def _bound_names(tree: Tree) -> set[str]:
    """Variables introduced by macros such as ``list.exists(x, x > 1)``."""
    bound = set()
    for node in tree.iter_subtrees():
        if node.data != "member_dot_arg" or len(node.children) < 3:
            continue
        method, arguments = node.children[1], node.children[2]
        if str(method) in _MACROS and isinstance(arguments, Tree) and arguments.children:
            bound |= _names(arguments.children[0])
    return bound
