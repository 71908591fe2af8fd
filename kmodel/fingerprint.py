"""Content fingerprints: one canonical byte string for any value the model passes around, for the run's digest.

`fingerprint(value)` encodes a value so that two values with different content never share an encoding:
every scalar carries its type and (for strings and bytes) its length, containers are bracketed, objects carry
their class's qualified name then their fields in declaration order. A dict is encoded in its own order (a
deterministic run builds its dicts in a deterministic order); a set, whose order depends on string hashing,
is encoded sorted. A function or method is encoded by its qualified name (never its address).

API objects are frozen and shared (a Pod stored in etcd is the one every watch event and list answer hands
out; an update shares the parts it did not change), so a frozen attrs instance is encoded once: as ``@`` and
the 16-byte blake2b of its encoding, memoised by identity like `kmodel.objects.memo` (the memo keeps the object
alive beside its answer, so its id cannot be reused, and is cleared wholesale when it grows past MEMO_SIZE).
The memo never changes an answer, only its cost. A frozen instance is taken to stay as it was built, as every
model object does (nothing mutates a field's list or dict after construction). A NamedTuple or dict class
declared `immutable` (etcd's KeyValue: the one a write records is the one every later watch event carries;
FrozenDict, an object's labels and annotations, shared by its versions) is memoised the same way. `content`
encodes a value met once (a message's envelope) in full, without the hash and the memo entry that only a
value met again repays.
"""

from __future__ import annotations

import enum
import hashlib
import operator
from typing import Any, Callable

import attrs

MEMO_SIZE = 65_536
_blake2b = hashlib.blake2b
_memo: dict[int, tuple[Any, bytes]] = {}
_strings: dict[str, bytes] = {}  # a model's strings repeat (names, keys, images): each is encoded once
Encoder = Callable[[Any], bytes]
_IMMUTABLE: set[type] = set()  # NamedTuple classes declared immutable (`immutable`)
_CONTENT: dict[type, Encoder] = {}  # the memoised classes' encoders in full (`content`)


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
    cls = type(value)
    encode = _CONTENT.get(cls)
    if encode is None:
        encode = _ENCODERS.get(cls) or _encoder_for(cls)
        encode = _CONTENT.get(cls, encode)  # a memoised class's full encoder, made with its encoder
    return encode(value)


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
    """Append the encoding of each value to `parts` (`fingerprint` of each, its commonest cases inline)."""
    append = parts.append
    for x in values:
        t = type(x)
        if t is str:
            append(_strings.get(x) or _str(x))
        elif x is None:
            append(b"N")
        else:
            append((_ENCODERS.get(t) or _encoder_for(t))(x))
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
        fields = tuple(f.name for f in attrs.fields(cls))
        head = b"A" + _str(name.decode())
        get = operator.attrgetter(*fields) if len(fields) > 1 else (lambda v: tuple(getattr(v, f) for f in fields))
        whole = lambda v: b"".join(_parts(get(v), [head])) + b"."  # noqa: E731
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
    return cls


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
