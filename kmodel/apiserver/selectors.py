"""Label and field selectors: parsing (with upstream's error texts) and matching.

Theory of operation
-------------------
`parse_label_selector(text)` follows k8s.io/apimachinery/pkg/labels/selector.go: a lexer (identifiers,
the keywords `in`/`notin`, the symbols `! != = == ( ) , > <`) feeding a recursive-descent parser, which
produces requirements sorted by key. Operators: `=`, `==`, `!=`, `in`, `notin`, exists (bare key), `!key`,
`gt`/`lt` (`>`/`<`, integer values). A parse error raises `SelectorError` whose text is upstream's (the API
server answers 400 BadRequest with it).

`parse_field_selector(text, resource)` follows k8s.io/apimachinery/pkg/fields/selector.go: comma-separated
terms `f=v`, `f==v`, `f!=v`; then, as the API server does through the resource's field label conversion,
a field the resource does not support is refused: for pods `field label not supported: <f>`, for kinds
with only the default conversion `"<f>" is not a known field selector: only "metadata.name",
"metadata.namespace"`.

Both selectors are immutable once parsed and are matched many times (watch caches match every event
against every watcher), so matching is a loop over pre-built tuples with no allocation.
`FieldSelector.required_value(field)` gives the value an `f=v` term requires (e.g. the node of a kubelet's
`spec.nodeName=node-1` watch), so watchers can be indexed by it instead of filtered.
`label_selector_from_object(meta_selector)` turns a metav1.LabelSelector (matchLabels/matchExpressions, as in
a Deployment's spec) into the same `LabelSelector`.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from kmodel.memo import identity_memo

__all__ = [
    "SelectorError",
    "LabelSelector",
    "Requirement",
    "FieldSelector",
    "FieldTerm",
    "EVERYTHING",
    "parse_label_selector",
    "parse_field_selector",
    "label_selector_from_object",
    "field_value",
    "SUPPORTED_FIELDS",
]


class SelectorError(ValueError):
    """A selector that does not parse; str() is upstream's message."""


# --- label selectors ---------------------------------------------------------------------------------------

EXISTS, DOES_NOT_EXIST, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, IN, NOT_IN, GT, LT = (
    "exists", "!", "=", "==", "!=", "in", "notin", "gt", "lt")
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


class Requirement:
    """One requirement: key, operator, values (sorted, as upstream's sets.String.List())."""

    __slots__ = ("key", "operator", "values", "_value_set")

    def __init__(self, key: str, operator: str, values: tuple = ()) -> None:
        self.key = key
        self.operator = operator
        self.values = tuple(sorted(set(values)))
        self._value_set = frozenset(self.values)

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op is EQUALS or op is DOUBLE_EQUALS or op is IN:
            return labels.get(self.key) in self._value_set
        if op is NOT_EQUALS or op is NOT_IN:
            return labels.get(self.key) not in self._value_set
        if op is EXISTS:
            return self.key in labels
        if op is DOES_NOT_EXIST:
            return self.key not in labels
        # gt / lt: the label must exist and parse as an integer
        value = labels.get(self.key)
        if value is None:
            return False
        try:
            have, want = int(value), int(self.values[0])
        except ValueError:
            return False
        return have > want if op is GT else have < want

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirement) and (self.key, self.operator, self.values) == (
            other.key, other.operator, other.values)

    def __hash__(self) -> int:
        return hash((self.key, self.operator, self.values))

    def __str__(self) -> str:
        op = self.operator
        if op is EXISTS:
            return self.key
        if op is DOES_NOT_EXIST:
            return "!" + self.key
        if op is IN or op is NOT_IN:
            return f"{self.key} {op} ({','.join(self.values)})"
        symbol = {GT: ">", LT: "<"}.get(op, op)
        return f"{self.key}{symbol}{self.values[0]}"

    __repr__ = __str__


class LabelSelector:
    """A parsed label selector: every requirement must match. The empty selector matches everything."""

    __slots__ = ("requirements", "_text")

    def __init__(self, requirements: tuple = ()) -> None:
        self.requirements = tuple(sorted(requirements, key=lambda r: r.key))
        self._text = ",".join(str(r) for r in self.requirements)

    def matches(self, labels: Optional[Mapping[str, str]]) -> bool:
        if labels is None:
            labels = {}
        for r in self.requirements:
            if not r.matches(labels):
                return False
        return True

    def empty(self) -> bool:
        return not self.requirements

    def requires_exact_match(self, key: str) -> Optional[str]:
        """The one value an `=`/`==`/single-valued `in` requirement demands for `key`, else None."""
        for r in self.requirements:
            if r.key == key and r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                return r.values[0]
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LabelSelector) and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash(self.requirements)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"LabelSelector({self._text!r})"


EVERYTHING = LabelSelector()

# Lexer tokens
_ID, _END, _ERR = "identifier", "end", "error"
_SYMBOLS = {"!": "!", "!=": "!=", "(": "(", ")": ")", ",": ",", "=": "=", "==": "==", ">": ">", "<": "<"}
_KEYWORDS = ("in", "notin")
_SPECIAL = frozenset("=!(),><")
_SPACE = frozenset(" \t\r\n")


def _lex(text: str) -> list[tuple[str, str]]:
    """Tokens as upstream's Lexer scans them: (token, literal); keywords are tokens named after themselves."""
    items: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n:
            items.append((_END, ""))
            return items
        ch = text[i]
        if ch in _SPECIAL:
            # longest run of special characters that still forms a known symbol
            buffer, last = "", None
            while i < n and text[i] in _SPECIAL:
                buffer += text[i]
                if buffer in _SYMBOLS:
                    last = buffer
                    i += 1
                elif last is not None:
                    break
                else:
                    i += 1
            if last is None:
                items.append((_ERR, f"error expected: keyword found '{buffer}'"))
            else:
                items.append((_SYMBOLS[last], last))
        else:
            start = i
            while i < n and text[i] not in _SPACE and text[i] not in _SPECIAL:
                i += 1
            word = text[start:i]
            items.append((word if word in _KEYWORDS else _ID, word))


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.pos = 0

    def _token(self, i: int, values: bool) -> tuple[str, str]:
        tok, lit = self.items[i]
        if values and tok in _KEYWORDS:
            tok = _ID
        return tok, lit

    def lookahead(self, values: bool = True) -> tuple[str, str]:
        return self._token(self.pos, values)

    def consume(self, values: bool = True) -> tuple[str, str]:
        self.pos += 1
        return self._token(self.pos - 1, values)

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_ID, "!"):
                try:
                    requirements.append(self.requirement())
                except SelectorError as e:
                    raise SelectorError(f"unable to parse requirement: {e}") from None
                t, l = self.consume()
                if t == _END:
                    return requirements
                if t == ",":
                    t2, l2 = self.lookahead()
                    if t2 not in (_ID, "!"):
                        raise SelectorError(f"found '{l2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{l}', expected: ',' or 'end of string'")
            elif tok == _END:
                return requirements
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        operator = None
        tok, lit = self.consume()
        if tok == "!":
            operator = DOES_NOT_EXIST
            tok, lit = self.consume()
        if tok != _ID:
            raise SelectorError(f"found '{lit}', expected: identifier")
        key = lit
        if operator is DOES_NOT_EXIST:  # "!key": whatever follows is parse()'s to refuse
            return Requirement(key, DOES_NOT_EXIST)
        if self.lookahead()[0] in (_END, ","):
            return Requirement(key, EXISTS)
        tok, lit = self.consume(values=False)
        operator = {"in": IN, "notin": NOT_IN, "=": EQUALS, "==": DOUBLE_EQUALS, "!=": NOT_EQUALS,
                    ">": GT, "<": LT}.get(tok)
        if operator is None:
            raise SelectorError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        if operator is IN or operator is NOT_IN:
            values = self.value_set()
            if not values:
                raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        else:
            values = self.exact_value()
        if operator is GT or operator is LT:
            try:
                int(values[0])
            except ValueError:
                raise SelectorError(
                    f"for 'Gt', 'Lt' operators, the value must be an integer") from None
        return Requirement(key, operator, tuple(values))

    def value_set(self) -> list[str]:
        tok, lit = self.consume()
        if tok != "(":
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok == ")":
            self.consume()
            return [""]
        if tok not in (_ID, ","):
            raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")
        values: list[str] = []
        while True:
            tok, lit = self.consume()
            if tok == _ID:
                values.append(lit)
                tok2, lit2 = self.lookahead()
                if tok2 == ",":
                    continue
                if tok2 == ")":
                    break
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            elif tok == ",":
                if not values:
                    values.append("")
                tok2, _ = self.lookahead()
                if tok2 == ")":
                    values.append("")
                    break
                if tok2 == ",":
                    values.append("")
            else:
                raise SelectorError(f"found '{lit}', expected: ',', or identifier")
        tok, lit = self.consume()
        if tok != ")":
            raise SelectorError(f"found '{lit}', expected: ')'")
        return values

    def exact_value(self) -> list[str]:
        tok, _ = self.lookahead()
        if tok in (_END, ","):
            return [""]
        tok, lit = self.consume()
        if tok == _ID:
            return [lit]
        raise SelectorError(f"found '{lit}', expected: identifier")


_LABEL_CACHE: dict[str, LabelSelector] = {}


def parse_label_selector(text: str) -> LabelSelector:
    """Parse a label selector string ("" selects everything). Raises SelectorError."""
    got = _LABEL_CACHE.get(text)
    if got is None:
        got = LabelSelector(tuple(_Parser(text).parse())) if text.strip() else EVERYTHING
        if len(_LABEL_CACHE) < 4096:  # selectors repeat (one per controller / informer): cache them
            _LABEL_CACHE[text] = got
    return got


def label_selector_from_object(selector: Any) -> LabelSelector:
    """metav1.LabelSelectorAsSelector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist).

    None selects nothing upstream (labels.Nothing()); here it returns a selector no labels satisfy. A workload's
    selector object is shared by its versions (and frozen), so its parsed selector is built once per object
    (`_selector_memo`); an invalid one raises every time."""
    return _selector_memo(selector)


def _label_selector_from_object(selector: Any) -> LabelSelector:
    if selector is None:
        return _NOTHING
    reqs = [Requirement(k, EQUALS, (v,)) for k, v in selector.match_labels.items()]
    ops = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}
    for expr in selector.match_expressions:
        op = ops.get(expr.operator)
        if op is None:
            raise SelectorError(f'"{expr.operator}" is not a valid label selector operator')
        reqs.append(Requirement(expr.key, op, tuple(expr.values)))
    return LabelSelector(tuple(reqs))


class _Nothing(LabelSelector):
    def matches(self, labels: Optional[Mapping[str, str]]) -> bool:
        return False


_NOTHING = _Nothing()
_selector_memo = identity_memo(_label_selector_from_object)


# --- field selectors ---------------------------------------------------------------------------------------


def _meta_name(o: Any) -> str:
    return o.metadata.name


def _meta_namespace(o: Any) -> str:
    return o.metadata.namespace


def _bool(v: bool) -> str:
    return "true" if v else "false"


_META_FIELDS: dict[str, Callable[[Any], str]] = {"metadata.name": _meta_name, "metadata.namespace": _meta_namespace}

# Per resource: field label -> getter, as each kind's field label conversion and GetAttrs allow
# (pkg/apis/core/v1/conversion.go, pkg/registry/core/*/strategy.go).
SUPPORTED_FIELDS: dict[str, dict[str, Callable[[Any], str]]] = {
    "pods": {
        **_META_FIELDS,
        "spec.nodeName": lambda o: o.spec.node_name,
        "spec.restartPolicy": lambda o: o.spec.restart_policy,
        "spec.schedulerName": lambda o: o.spec.scheduler_name,
        "spec.serviceAccountName": lambda o: o.spec.service_account_name,
        "spec.hostNetwork": lambda o: _bool(o.spec.host_network),
        "status.phase": lambda o: o.status.phase,
        "status.podIP": lambda o: o.status.pod_ip,
        "status.nominatedNodeName": lambda o: o.status.nominated_node_name,
    },
    "nodes": {**_META_FIELDS, "spec.unschedulable": lambda o: _bool(o.spec.unschedulable)},
    "namespaces": {**_META_FIELDS, "status.phase": lambda o: o.status.phase},
    "events": {
        **_META_FIELDS,
        "involvedObject.kind": lambda o: o.involved_object.kind,
        "involvedObject.namespace": lambda o: o.involved_object.namespace,
        "involvedObject.name": lambda o: o.involved_object.name,
        "involvedObject.uid": lambda o: o.involved_object.uid,
        "involvedObject.apiVersion": lambda o: o.involved_object.api_version,
        "involvedObject.resourceVersion": lambda o: o.involved_object.resource_version,
        "involvedObject.fieldPath": lambda o: o.involved_object.field_path,
        "reason": lambda o: o.reason,
        "reportingComponent": lambda o: o.reporting_component,
        "source": lambda o: o.source.component,
        "type": lambda o: o.type,
    },
    "replicasets": {**_META_FIELDS, "status.replicas": lambda o: str(o.status.replicas)},
}

# Resources whose conversion says "field label not supported" (the core kinds with their own conversion).
_CUSTOM_CONVERSION = ("pods", "nodes", "namespaces", "events", "replicasets")


class FieldTerm:
    """One term: field, "=" or "!=", value, and the getter that reads the field from an object."""

    __slots__ = ("field", "operator", "value", "getter")

    def __init__(self, field: str, operator: str, value: str, getter: Callable[[Any], str]) -> None:
        self.field, self.operator, self.value, self.getter = field, operator, value, getter

    def matches(self, obj: Any) -> bool:
        return (self.getter(obj) == self.value) is (self.operator == "=")

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{self.value}"


class FieldSelector:
    """A parsed field selector: every term must match. The empty selector matches everything."""

    __slots__ = ("terms", "_required", "_text")

    def __init__(self, terms: tuple = ()) -> None:
        self.terms = tuple(terms)
        self._required = {t.field: t.value for t in self.terms if t.operator == "="}
        self._text = ",".join(str(t) for t in self.terms)

    def matches(self, obj: Any) -> bool:
        for t in self.terms:
            if not t.matches(obj):
                return False
        return True

    def empty(self) -> bool:
        return not self.terms

    def required_value(self, field: str) -> Optional[str]:
        """The value a `field=value` term requires, or None (e.g. "node-1" for spec.nodeName=node-1)."""
        return self._required.get(field)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldSelector) and self._text == other._text

    def __hash__(self) -> int:
        return hash(self._text)

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"FieldSelector({self._text!r})"


EVERY_FIELD = FieldSelector()


def field_value(resource: str, field: str, obj: Any) -> str:
    """The value of a supported field label of an object of `resource`."""
    return SUPPORTED_FIELDS.get(resource, _META_FIELDS)[field](obj)


def _split(part: str, op: str) -> Optional[tuple[str, str]]:
    pieces = part.split(op)
    return (pieces[0], pieces[1]) if len(pieces) == 2 else None


_FIELD_CACHE: dict[tuple[str, str], FieldSelector] = {}


def parse_field_selector(text: str, resource: str = "pods") -> FieldSelector:
    """Parse a field selector for `resource` (plural). Raises SelectorError with upstream's messages."""
    cache_key = (text, resource)
    got = _FIELD_CACHE.get(cache_key)
    if got is not None:
        return got
    supported = SUPPORTED_FIELDS.get(resource, _META_FIELDS)
    terms = []
    for part in sorted(text.split(",")):
        if part == "":
            continue
        for op, kind in (("!=", "!="), ("==", "="), ("=", "=")):
            split = _split(part, op)
            if split is not None:
                break
        else:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        field, value = split
        getter = supported.get(field)
        if getter is None:
            if resource in _CUSTOM_CONVERSION:
                raise SelectorError(f"field label not supported: {field}")
            raise SelectorError(
                f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"')
        terms.append(FieldTerm(field, kind, value, getter))
    got = FieldSelector(tuple(terms)) if terms else EVERY_FIELD
    if len(_FIELD_CACHE) < 4096:
        _FIELD_CACHE[cache_key] = got
    return got
