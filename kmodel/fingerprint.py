"""Content fingerprints: one canonical byte string for any value the model passes around, for the run's digest.

`fingerprint(value)` encodes a value so that two values with different content never share an encoding:
every scalar carries its type and (for strings and bytes) its length, containers are bracketed, objects carry
their class's qualified name then their fields in declaration order. A dict is encoded in its own order (a
deterministic run builds its dicts in a deterministic order); a set, whose order depends on string hashing,
is encoded sorted. A function or method is encoded by its qualified name (never its address).

API objects are frozen and shared (a Pod stored in etcd is the one every watch event and list answer hands
out; an update shares the parts it did not change), so a frozen attrs instance is encoded once: as ``@`` and
the 16-byte blake2b of its encoding, memoised by identity like `kmodel.memo` (the memo keeps the object
alive beside its answer, so its id cannot be reused, and is cleared wholesale when it grows past MEMO_SIZE).
The memo never changes an answer, only its cost. A frozen instance is taken to stay as it was built, as every
model object does (nothing mutates a field's list or dict after construction). A NamedTuple or dict class
declared `immutable` (etcd's KeyValue: the one a write records is the one every later watch event carries;
FrozenDict, an object's labels and annotations, shared by its versions) is memoised the same way. `content`
encodes a value met once (a message's envelope) in full, without the hash and the memo entry that only a
value met again repays, except that an envelope of a class declared `fanned_out` (a watch event, delivered to
each of its watchers) is looked up by identity in a small memo of recent ones, so the very same one delivered
again is not encoded again.

`reference(value)` and `reference_content(value)` compute the same bytes the plain way: one recursive function,
no memo, no per-class encoder. They are the definition; `fingerprint` and `content` are the fast paths
(per-class encoders generated once, the commonest scalars inline, memos by identity), checked against them by
tests/checker/test_digest.py over every message and write of a cluster's run.
"""

from __future__ import annotations

import enum
import hashlib
import keyword
from typing import Any, Callable

import attrs

from kmodel.memo import identity_memo

MEMO_SIZE = 65_536
_blake2b = hashlib.blake2b
_memo: dict[int, tuple[Any, bytes]] = {}
_strings: dict[str, bytes] = {}  # a model's strings repeat (names, keys, images): each is encoded once
Encoder = Callable[[Any], bytes]
_IMMUTABLE: set[type] = set()  # NamedTuple classes declared immutable (`immutable`)
_CONTENT: dict[type, Encoder] = {}  # the memoised classes' encoders in full (`content`)
_FANNED: set[type] = set()  # classes declared `fanned_out`
_CONTENT_OF: dict[type, Encoder] = {}  # `content`'s encoder of each class met: full, memoised if fanned out
#: the size of `content`'s memo of the recent envelopes of a `fanned_out` class by identity (kmodel.memo:
#: each kept alive beside its encoding, like `_memo`): the same watch event is delivered to each of its watchers
CONTENT_MEMO_SIZE = 4_096


def fingerprint(value: Any) -> bytes:
    """The canonical encoding of `value` (see the module docstring)."""
    encode = _ENCODERS.get(type(value))
    if encode is None:
        encode = _encoder_for(type(value))
    return encode(value)


def content(value: Any) -> bytes:
    """`fingerprint(value)` for a value seen once (a message's envelope): a frozen instance is encoded in full
    rather than hashed and memoised; what it holds is memoised as usual. Two values share a `content` only if
    they are equal."""
    encode = _CONTENT_OF.get(type(value))
    if encode is None:
        encode = _content_encoder(type(value))
    return encode(value)


def _content_encoder(cls: type) -> Encoder:
    """`content`'s encoder of `cls` (made once per class): the class's full encoder (its plain one when it is not
    immutable), looked up first in the memo of recent envelopes when the class is `fanned_out`."""
    encode = _ENCODERS.get(cls) or _encoder_for(cls)
    encode = _CONTENT.get(cls, encode)  # an immutable class: in full, not hashed (made with its encoder)
    if cls in _FANNED:
        encode = identity_memo(encode, CONTENT_MEMO_SIZE)
    _CONTENT_OF[cls] = encode
    return encode


def _str(v: str) -> bytes:
    encoded = _strings.get(v)
    if encoded is None:
        b = v.encode("utf-8", "surrogatepass")
        encoded = b"s%d:%b" % (len(b), b)
        if len(_strings) >= MEMO_SIZE:
            _strings.clear()
        _strings[v] = encoded
    return encoded


def _bytes(v: bytes) -> bytes:
    return b"b%d:" % len(v) + bytes(v)


def _parts(values: Any, parts: list) -> list:
    """Append the encoding of each value to `parts` (`fingerprint` of each, its commonest cases inline: a string,
    None, an int, a bool, an empty tuple, an immutable object already in the memo)."""
    append = parts.append
    for x in values:
        t = type(x)
        if t is str:
            append(_strings.get(x) or _str(x))
        elif x is None:
            append(b"N")
        elif t is int:
            append(b"i%d;" % x)
        elif x is True:
            append(b"T")
        elif x is False:
            append(b"F")
        elif t is tuple and not x:
            append(b"()")  # an empty tuple (most owner references and finalizers), without a call
        else:
            entry = _memo.get(id(x))  # an immutable object met before: its answer, without a call
            append(entry[1] if entry is not None and entry[0] is x else (_ENCODERS.get(t) or _encoder_for(t))(x))
    return parts


def _seq(open_: bytes, close: bytes) -> Encoder:
    def encode(v: Any) -> bytes:
        return b"".join(_parts(v, [open_])) + close
    return encode


def _mapping(prefix: bytes) -> Encoder:
    def encode(v: Any) -> bytes:
        parts = [prefix]
        for item in v.items():
            _parts(item, parts)
        return b"".join(parts) + b"}"
    return encode


def _unordered(v: Any) -> bytes:
    return b"<" + b"".join(sorted(fingerprint(x) for x in v)) + b">"


_ENCODERS: dict[type, Encoder] = {
    str: _str,
    int: lambda v: b"i%d;" % v,
    bool: lambda v: b"T" if v else b"F",
    type(None): lambda v: b"N",
    float: lambda v: b"f" + repr(v).encode() + b";",
    bytes: _bytes,
    bytearray: _bytes,
    list: _seq(b"[", b"]"),
    tuple: _seq(b"(", b")"),
    dict: _mapping(b"{"),
    set: _unordered,
    frozenset: _unordered,
}


def _name(cls: type) -> bytes:
    return f"{cls.__module__}.{cls.__qualname__}".encode()


def _encoder_for(cls: type) -> Encoder:
    """Build (once per class) the encoder of a class the table does not know yet."""
    name = _name(cls)
    encode: Encoder
    if attrs.has(cls):
        whole = _attrs_encoder(cls, b"A" + _str(name.decode()))
        if _is_frozen(cls):
            _CONTENT[cls] = whole
            encode = _memoised(whole)
        else:
            encode = whole
    elif issubclass(cls, tuple) and hasattr(cls, "_fields"):  # a NamedTuple
        head = b"T" + _str(name.decode())
        whole = lambda v: b"".join(_parts(v, [head])) + b")"  # noqa: E731
        if cls in _IMMUTABLE:
            _CONTENT[cls] = whole
            encode = _memoised(whole)
        else:
            encode = whole
    elif issubclass(cls, enum.Enum):
        head = b"E" + _str(name.decode())
        encode = lambda v: head + fingerprint(v.value)  # noqa: E731
    elif issubclass(cls, dict):
        whole = _mapping(b"D" + _str(name.decode()) + b"{")
        if cls in _IMMUTABLE:
            _CONTENT[cls] = whole
            encode = _memoised(whole)
        else:
            encode = whole
    elif issubclass(cls, (list, tuple)):
        encode = _seq(b"L" + _str(name.decode()) + b"[", b"]")
    elif issubclass(cls, (set, frozenset)):
        encode = _unordered
    elif issubclass(cls, str):
        encode = _str
    elif issubclass(cls, int):
        encode = _ENCODERS[int]
    elif callable(cls) and cls.__name__ in ("function", "method", "builtin_function_or_method", "partial"):
        encode = lambda v: b"F" + _str(getattr(v, "__qualname__", type(v).__qualname__))  # noqa: E731
    else:
        head = b"O" + _str(name.decode())
        encode = lambda v: head + fingerprint(_state(v)) + b"."  # noqa: E731
    _ENCODERS[cls] = encode
    return encode


#: the body of a generated attrs encoder, once per field: `_parts`' loop unrolled over the class's fields
_FIELD_SOURCE = """\
    x = v.{field}
    t = type(x)
    if t is str:
        append(strings.get(x) or encode_str(x))
    elif x is None:
        append(b"N")
    elif t is int:
        append(b"i%d;" % x)
    elif x is True:
        append(b"T")
    elif x is False:
        append(b"F")
    elif t is tuple and not x:
        append(b"()")
    else:
        entry = memo.get(id(x))
        append(entry[1] if entry is not None and entry[0] is x else (encoders.get(t) or encoder_for(t))(x))
"""


def _attrs_encoder(cls: type, head: bytes) -> Encoder:
    """The full encoder of an attrs class (`head`, each field's encoding in declaration order, then ``.``): a
    function generated for the class, which reads each field by name (no tuple of them, no loop, no call for a
    string, None, int, bool, an empty tuple or an immutable object already in the memo)."""
    fields = [f.name for f in attrs.fields(cls)]
    if not all(f.isidentifier() and not keyword.iskeyword(f) for f in fields):  # pragma: no cover - none is
        return lambda v: b"".join(_parts([getattr(v, f) for f in fields], [head])) + b"."
    source = ("def encode(v):\n    parts = [head]\n    append = parts.append\n"
              + "".join(_FIELD_SOURCE.format(field=f) for f in fields)
              + "    append(b'.')\n    return b''.join(parts)\n")
    scope = {"head": head, "strings": _strings, "encode_str": _str, "encoders": _ENCODERS,
             "encoder_for": _encoder_for, "memo": _memo}
    exec(compile(source, f"<fingerprint encoder of {cls.__qualname__}>", "exec"), scope)  # noqa: S102
    return scope["encode"]


def _memoised(encoding: Encoder) -> Encoder:
    """The encoder of an immutable class: ``@`` and the 16-byte blake2b of `encoding(v)`, once per object."""
    def encode(v: Any) -> bytes:
        key = id(v)
        entry = _memo.get(key)
        if entry is not None and entry[0] is v:
            return entry[1]
        digest = b"@" + _blake2b(encoding(v), digest_size=16).digest()
        if len(_memo) >= MEMO_SIZE:
            _memo.clear()
        _memo[key] = (v, digest)
        return digest
    return encode


def immutable(cls: type) -> type:
    """Declare a NamedTuple's or a dict subclass's instances immutable all the way down (every item a scalar or
    an immutable object), so each is encoded once, as a frozen attrs instance is. A class decorator."""
    _IMMUTABLE.add(cls)
    _ENCODERS.pop(cls, None)
    _CONTENT.pop(cls, None)
    _CONTENT_OF.pop(cls, None)
    return cls


def fanned_out(cls: type) -> type:
    """Declare that one instance of `cls` is often delivered several times (a watch event, to each of its
    watchers), so `content` keeps the recent ones' encodings by identity (see the module docstring). A class
    decorator; it changes no encoding, only its cost."""
    _FANNED.add(cls)
    _CONTENT_OF.pop(cls, None)
    return cls


def reference(value: Any) -> bytes:
    """What `fingerprint(value)` returns, computed the plain way (no memo, no generated encoder): the definition
    of the encoding (see the module docstring), which the fast path is tested against."""
    return _reference(value, True)


def reference_content(value: Any) -> bytes:
    """What `content(value)` returns, computed the plain way: `reference`, the value itself encoded in full."""
    return _reference(value, False)


def _reference(v: Any, hashed: bool) -> bytes:
    """The encoding of `v`; with `hashed`, an immutable object's is ``@`` and the blake2b of its full one."""
    cls = type(v)

    def items(values: Any) -> bytes:
        return b"".join(_reference(x, True) for x in values)

    def label(prefix: bytes) -> bytes:
        return prefix + _reference(f"{cls.__module__}.{cls.__qualname__}", True)

    def once(full: bytes) -> bytes:
        return b"@" + _blake2b(full, digest_size=16).digest() if hashed else full

    if cls is str:
        b = v.encode("utf-8", "surrogatepass")
        return b"s%d:%b" % (len(b), b)
    if cls is bool:
        return b"T" if v else b"F"
    if v is None:
        return b"N"
    if cls is int:
        return b"i%d;" % v
    if cls is float:
        return b"f" + repr(v).encode() + b";"
    if cls is bytes or cls is bytearray:
        return b"b%d:" % len(v) + bytes(v)
    if cls is list:
        return b"[" + items(v) + b"]"
    if cls is tuple:
        return b"(" + items(v) + b")"
    if cls is dict:
        return b"{" + b"".join(items(item) for item in v.items()) + b"}"
    if cls is set or cls is frozenset:
        return b"<" + b"".join(sorted(_reference(x, True) for x in v)) + b">"
    if attrs.has(cls):
        full = label(b"A") + items(getattr(v, f.name) for f in attrs.fields(cls)) + b"."
        return once(full) if _is_frozen(cls) else full
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        full = label(b"T") + items(v) + b")"
        return once(full) if cls in _IMMUTABLE else full
    if issubclass(cls, enum.Enum):
        return label(b"E") + _reference(v.value, True)
    if issubclass(cls, dict):
        full = label(b"D") + b"{" + b"".join(items(item) for item in v.items()) + b"}"
        return once(full) if cls in _IMMUTABLE else full
    if issubclass(cls, (list, tuple)):
        return label(b"L") + b"[" + items(v) + b"]"
    if issubclass(cls, (set, frozenset)):
        return b"<" + b"".join(sorted(_reference(x, True) for x in v)) + b">"
    if issubclass(cls, str):
        b = v.encode("utf-8", "surrogatepass")
        return b"s%d:%b" % (len(b), b)
    if issubclass(cls, int):
        return b"i%d;" % v
    if cls.__name__ in ("function", "method", "builtin_function_or_method", "partial"):
        return b"F" + _reference(getattr(v, "__qualname__", cls.__qualname__), True)
    return label(b"O") + _reference(_state(v), True) + b"."


def _is_frozen(cls: type) -> bool:
    """Is `cls` an attrs class whose instances refuse attribute assignment (attrs.frozen)?"""
    try:
        return bool(cls.__attrs_attrs__) and getattr(cls.__setattr__, "__name__", "") == "_frozen_setattrs"
    except AttributeError:
        return False


def _state(v: Any) -> Any:
    """A plain object's fields: its __dict__, else its __slots__ in declaration order."""
    state = getattr(v, "__dict__", None)
    if state is not None:
        return state
    names = [n for c in type(v).__mro__ for n in getattr(c, "__slots__", ())]
    return tuple(getattr(v, n, None) for n in names)
