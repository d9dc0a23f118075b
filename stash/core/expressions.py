"""Safe conditions: CEL (Common Expression Language) expressions over ``payload`` and ``meta``.

    check = compile_condition('has(payload.data) && payload.data.probability > 0.5')
    check({"payload": {...}, "meta": {...}})     # -> True / False

CEL is not Turing-complete and has no access to Python: no imports, attributes or calls
beyond its own functions. An expression is parsed and checked when it is saved; an invalid,
oversized, too deeply nested or unsafe one (``__import__``, ``__class__``) raises
``ExpressionError`` with a clear message. ``eval`` is never used.

Evaluation is capped too: a condition over a large payload (``payload.a.all(x,
payload.a.all(y, ...))``) stops with ``ExpressionError`` after ``MAX_STEPS`` evaluation steps or
``MAX_SECONDS``, whichever comes first, in any thread (the pipeline's per-hook deadline only
interrupts in a worker's main thread).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, Callable, Mapping, cast

import celpy
from celpy.celparser import CELParseError
from celpy.evaluation import Evaluator
from lark import Token, Tree

from stash.core.exceptions import ExpressionError

logger = logging.getLogger(__name__)

MAX_LENGTH = 1000
# Levels of the parse tree: a pair of parentheses is about ten. Deeper trees would exhaust
# Python's recursion when evaluated.
MAX_DEPTH = 150
# One step is one node of the tree evaluated (a few microseconds); a macro over a list takes a
# few per element.
MAX_STEPS = 50_000
MAX_SECONDS = 0.5
VARIABLES = ("payload", "meta")
#: What a review priority reads: the item, and the reason code of the hook that held it.
PRIORITY_VARIABLES = ("payload", "meta", "reason_code")
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
# What celpy says when an integer leaves that range (a literal, int(), arithmetic).
_OVERFLOWS = frozenset({"overflow", "return error for overflow"})
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
# CEL's own global functions, the only ones a condition may call.
FUNCTIONS = frozenset(
    {
        "has",
        "dyn",
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "type",
        "bool",
        "bytes",
        "double",
        "duration",
        "int",
        "list",
        "map",
        "string",
        "timestamp",
        "uint",
    }
)


class _OverBudget(Exception):
    """An evaluation ran past its steps or time."""


class _Budget:
    def __init__(self) -> None:
        self.steps = MAX_STEPS
        self.deadline = time.monotonic() + MAX_SECONDS


class _CappedEvaluator(Evaluator):
    """celpy's evaluator, counting every node it evaluates against a budget shared with its macros."""

    def __init__(self, ast: Tree[Token], activation: Any, budget: _Budget) -> None:
        super().__init__(ast, activation)
        self.budget = budget

    def charge(self, nodes: int) -> None:
        budget = self.budget
        budget.steps -= nodes
        if budget.steps < 0:
            raise _OverBudget(f"it took more than {MAX_STEPS} steps")
        if time.monotonic() > budget.deadline:
            raise _OverBudget(f"it ran longer than {MAX_SECONDS} s")

    # celpy evaluates a node through lark's public ``visit`` (a node it evaluates on its own) or
    # ``visit_children`` (every child node of a node): charging both counts every node evaluated.
    def visit(self, tree: Tree[Token]) -> Any:
        self.charge(1)
        return super().visit(tree)

    def visit_children(self, tree: Tree[Token]) -> list[Any]:
        self.charge(sum(isinstance(child, Tree) for child in tree.children))
        return super().visit_children(tree)

    def sub_evaluator(self, ast: Tree[Token]) -> Evaluator:
        return _CappedEvaluator(ast, self.activation, self.budget)


class _CappedRunner(celpy.InterpretedRunner):
    def evaluate(self, context: Any) -> Any:
        return _CappedEvaluator(self.ast, self.new_activation(), _Budget()).evaluate(context)


_environment = celpy.Environment(runner_class=_CappedRunner)


def compile_condition(text: str) -> Callable[[Mapping[str, Any]], bool]:
    """Compile ``text`` into a predicate over ``{"payload": ..., "meta": ...}``.

    Raises ``ExpressionError`` if the text is too long or too deeply nested, does not parse,
    uses a ``__dunder__`` name, or reads a name other than ``payload`` and ``meta``. The
    predicate raises ``ExpressionError`` if evaluation fails (a missing field, a type
    mismatch), runs past its budget or does not give a boolean.
    """
    evaluate = _compile(text, "condition", VARIABLES)

    def predicate(context: Mapping[str, Any]) -> bool:
        value = evaluate(context)
        if not isinstance(value, (bool, celpy.celtypes.BoolType)):
            raise ExpressionError(f"condition gave {type(value).__name__}, not true or false")
        return bool(value)

    return predicate


def compile_priority(text: str) -> Callable[[Mapping[str, Any]], float]:
    """Compile ``text`` into a function giving a number over ``{"payload": ..., "meta": ...,
    "reason_code": ...}``: an item's place in the review queue (higher first).

    Raises ``ExpressionError`` as ``compile_condition`` does (the names it may read are
    ``PRIORITY_VARIABLES``); the function raises it when evaluation fails or does not give a number.
    """
    evaluate = _compile(text, "priority", PRIORITY_VARIABLES)

    def priority(context: Mapping[str, Any]) -> float:
        value = evaluate(context)
        if isinstance(value, (bool, celpy.celtypes.BoolType)) or not isinstance(
            value, (int, float, celpy.celtypes.IntType, celpy.celtypes.UintType, celpy.celtypes.DoubleType)
        ):
            raise ExpressionError(f"priority gave {type(value).__name__}, not a number")
        number = float(value)
        if math.isnan(number):
            raise ExpressionError("priority gave NaN, not a number")
        return number

    return priority


def _compile(text: str, what: str, variables: tuple[str, ...]) -> Callable[[Mapping[str, Any]], Any]:
    """Parse and check ``text`` (an expression reading only ``variables``), and return a function
    that evaluates it over a context, within its budget; ``what`` names it in errors."""
    text = (text or "").strip()
    if not text:
        raise ExpressionError(f"The {what} is empty.")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"The {what} is {len(text)} characters long; the limit is {MAX_LENGTH}.")
    try:
        tree = _environment.compile(text)
    except CELParseError as exc:
        raise ExpressionError(f"The {what} does not parse: {str(exc).splitlines()[0]}") from exc
    except RecursionError:
        raise ExpressionError(f"The {what} is nested too deeply.") from None
    if _depth(tree) > MAX_DEPTH:
        raise ExpressionError(f"The {what} is nested too deeply: use fewer parentheses or operators in a row.")
    calls = sorted(_calls(tree) - FUNCTIONS)
    if calls:
        raise ExpressionError(f"The {what} calls unknown function(s) {', '.join(calls)}.")
    dunders = sorted({str(token) for token in tree.scan_values(_is_identifier) if str(token).startswith("__")})
    if dunders:
        raise ExpressionError(
            f"The {what} uses {', '.join(dunders)}: names starting with __ are not allowed "
            f"({what}s read payload data, not Python attributes)."
        )
    unknown = sorted(_names(tree) - set(variables) - _bound_names(tree))
    if unknown:
        available = " and ".join([", ".join(variables[:-1]), variables[-1]])
        raise ExpressionError(f"The {what} reads unknown name(s) {', '.join(unknown)}: only {available} are available.")
    program = _environment.program(tree)

    def evaluate(context: Mapping[str, Any]) -> Any:
        try:
            value = program.evaluate({key: to_cel(value) for key, value in context.items()})
        except _OverBudget as exc:
            raise ExpressionError(f"{what} stopped: {exc}") from None
        except Exception as exc:
            raise ExpressionError(f"{what} failed: {_message(exc)}") from exc
        if isinstance(value, Exception):  # celpy returns some errors as values
            raise ExpressionError(f"{what} failed: {_message(value)}")
        return value

    return evaluate


def to_cel(value: Any) -> Any:
    """A JSON value as CEL sees it: like ``celpy.json_to_cel``, but an integer outside CEL's 64-bit
    ``int`` becomes a ``double``, the type CEL gives every JSON number: a payload that carries a
    large number somewhere can still be judged by conditions over its other fields.

    Raises ``ValueError`` for a value JSON cannot hold.
    """
    if isinstance(value, bool):
        return celpy.celtypes.BoolType(value)
    if isinstance(value, int):
        if _INT_MIN <= value <= _INT_MAX:
            return celpy.celtypes.IntType(value)
        return celpy.celtypes.DoubleType(_as_double(value))
    if isinstance(value, Mapping):
        return celpy.celtypes.MapType({to_cel(key): to_cel(member) for key, member in value.items()})
    if isinstance(value, (list, tuple)):
        return celpy.celtypes.ListType([to_cel(member) for member in value])
    return celpy.json_to_cel(value)


def _as_double(value: int) -> float:
    try:
        return float(value)
    except OverflowError:  # past the largest double, as IEEE 754 rounds it
        return math.inf if value > 0 else -math.inf


def validate_condition(text: str) -> None:
    """Raise ``ExpressionError`` if ``text`` is not a valid condition."""
    compile_condition(text)


def validate_priority(text: str) -> None:
    """Raise ``ExpressionError`` if ``text`` is not a valid review priority."""
    compile_priority(text)


def _message(exc: Exception) -> str:
    text = str(exc.args[0]) if exc.args else str(exc)
    if text in _OVERFLOWS:
        return f"a number is outside CEL's 64-bit integer range ({_INT_MIN} to {_INT_MAX})"
    return text.split(" (in activation")[0]


def _is_identifier(value: Any) -> bool:
    return isinstance(value, Token) and value.type == "IDENT"


def _depth(tree: Tree[Token]) -> int:
    """Levels of the parse tree, counted without recursion (the tree may be very deep)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))
    return deepest


def _calls(tree: Tree[Token]) -> set[str]:
    """Functions called as ``name(...)`` (methods such as ``s.contains(x)`` are CEL's own)."""
    return {
        str(node.children[0])
        for node in tree.iter_subtrees()
        if node.data == "ident_arg" and node.children and isinstance(node.children[0], Token)
    }


def _names(tree: Tree[Token]) -> set[str]:
    """Top-level identifiers the expression reads."""
    names: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data == "ident":
            names.update(str(child) for child in node.children if isinstance(child, Token))
    return names


def _bound_names(tree: Tree[Token]) -> set[str]:
    """Variables introduced by macros such as ``list.exists(x, x > 1)``."""
    bound = set()
    for node in tree.iter_subtrees():
        if node.data != "member_dot_arg" or len(node.children) < 3:
            continue
        method, arguments = node.children[1], node.children[2]
        if str(method) in _MACROS and isinstance(arguments, Tree) and arguments.children:
            # An argument list holds expressions: its first child is a tree, never a token.
            bound |= _names(cast("Tree[Token]", arguments.children[0]))
    return bound
