"""Hypothesis strategies for what people and programs send, and the rule every write path keeps.

Strings carry what databases and encoders trip over (NUL, lone surrogates, every plane); numbers run
past 64 bits, past 1,000 digits and out to infinity; JSON nests and mixes all of them.
"""

import json
import math
from decimal import Decimal

from hypothesis import strategies as st

#: Characters from the whole of Unicode, lone surrogates and NUL included.
characters = st.one_of(
    st.characters(codec=None, exclude_categories=()), st.characters(categories=["Cs"]), st.just("\x00")
)
texts = st.text(characters, max_size=20)
#: Texts a browser can send in a form: UTF-8 cannot carry a lone surrogate.
form_texts = st.text(st.characters(codec="utf-8"), max_size=40)
integers = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, 10**999, 10**1000, -(10**1000), 10**4000]),
)
numbers = st.one_of(integers, st.floats(allow_nan=False))  # infinities too: JSON cannot spell them
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4), max_leaves=12
)
json_objects = st.dictionaries(texts, json_values, max_size=5)
#: What a JSON body may hold where an object is expected: mostly objects, sometimes anything.
payloads = st.one_of(json_objects, json_objects, json_values)
#: Stash slugs: the real ones, and anything else.
slugs = st.one_of(st.sampled_from(["audit", "open"]), texts)


def as_json(value) -> str:
    """``value`` as a JSON text: lone surrogates escaped, infinities written as Python does (not JSON)."""
    return json.dumps(value, ensure_ascii=True)


def same_json(sent, stored) -> bool:
    """True if ``stored`` is ``sent`` read back: equal, with numbers compared as the decimal numbers
    JSON wrote (PostgreSQL keeps ``1e+308`` as the integer 10**308, and -0.0 as 0)."""
    if isinstance(sent, bool) or isinstance(stored, bool):
        return sent is stored
    if isinstance(sent, (int, float)) and isinstance(stored, (int, float)):
        return _decimal(sent) == _decimal(stored)
    if isinstance(sent, dict) and isinstance(stored, dict):
        return sent.keys() == stored.keys() and all(same_json(sent[key], stored[key]) for key in sent)
    if isinstance(sent, list) and isinstance(stored, list):
        return len(sent) == len(stored) and all(same_json(a, b) for a, b in zip(sent, stored, strict=True))
    return type(sent) is type(stored) and sent == stored


def _decimal(number) -> Decimal:
    if isinstance(number, float):
        assert math.isfinite(number), number
        return Decimal(repr(number))
    return Decimal(number)
