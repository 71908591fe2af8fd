"""What a violation names: the components and objects its message points at, and the messages that touch them.

Theory of operation
-------------------
An invariant's message is written for a person ("node IPAM holds 10.244.1.0/24, which no node has", "replicaset
default/web-5d8 wants 2 replicas but has 1 live pods", "kubelet/node-2 is down"). `focus_of` reads it against
what the replay saw, with no help from the invariant:

* an *endpoint* is named when its full name is a word of the message ("kubelet/node-2", "etcd"), or when its
  short name, letters and digits only and at least five of them, is in the message read the same way
  ("nodeipam" in "node IPAM");
* an *object* (``resource/namespace/name``) is named when a word of the message is its ``namespace/name``, or
  its name where the name is not a plain word (it holds a digit, "-" or "."), or its plain name right after
  its kind ("deployment web"); or when a value-like word of the message (one with a digit and a ".", ":" or
  "/": an IP, a CIDR, an address with its port) is in the object's last known JSON (the node whose podCIDR is
  10.244.1.0/24). Events are never named by value: they repeat the values of what they report on;
* then the endpoints that run for a named object are named too: those whose short name is its name (the
  kubelet, kube-proxy and traffic of node node-2).

A message touches the focus when it comes from or goes to a named endpoint, or its label names a named object
("update nodes node-2", "WatchEvent DELETED nodes/node-2"). A watch bookmark never does: it carries no object,
only a watch's progress, and every watcher gets one now and then.

Everything here is a pure function of its arguments, and every result is sorted.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._:/-]*[A-Za-z0-9])?")
_ALNUM = re.compile(r"[^a-z0-9]")
_PLAIN = re.compile(r"[a-z]+")
#: the label of a watch bookmark (kmodel.checker.labels)
BOOKMARK = "WatchEvent BOOKMARK"
#: an endpoint's short name must have this many letters and digits to be found run together in a message
MIN_RUN = 5


def words(text: str) -> list[str]:
    """The words of a message: runs of letters, digits and ``._:/-``, without trailing punctuation."""
    return _WORD.findall(text)


def _value_like(word: str) -> bool:
    return any(ch.isdigit() for ch in word) and any(ch in word for ch in ".:/")


def _short(endpoint: str) -> str:
    return endpoint.split("/", 1)[1] if "/" in endpoint else endpoint


def _parts(ref: str) -> tuple[str, str, str]:
    """(resource, namespace, name) of ``resource/namespace/name`` or ``resource/name``."""
    resource, _, rest = ref.partition("/")
    namespace, _, name = rest.rpartition("/")
    return resource, namespace, name


def _singular(resource: str) -> str:
    return resource[:-1] if resource.endswith("s") else resource


def _contains_value(text: str, value: str) -> bool:
    """`value` in `text` as a whole value: 10.244.1.0/24 is not in 10.244.1.0/240 nor in 110.244.1.0/24."""
    return re.search(rf"(?<![\w.]){re.escape(value)}(?!\d|\.\d)", text) is not None


def focus_of(message: str, endpoints: Iterable[str],
             objects: Mapping[str, str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The endpoints and objects `message` names, sorted. `objects` maps each object's reference to the text to
    look for values in (its last known JSON)."""
    found_words = words(message)
    word_set = set(found_words)
    lowered = [w.lower() for w in found_words]
    run_together = _ALNUM.sub("", message.lower())
    endpoints = sorted(set(endpoints))

    named_objects = set()
    for ref, text in objects.items():
        resource, namespace, name = _parts(ref)
        if not name:
            continue
        if namespace and f"{namespace}/{name}" in word_set:
            named_objects.add(ref)
        elif name in word_set and not _PLAIN.fullmatch(name):
            named_objects.add(ref)
        elif name in word_set and any(lowered[i] == _singular(resource) and found_words[i + 1] == name
                                      for i in range(len(found_words) - 1)):
            named_objects.add(ref)
    values = [w for w in found_words if _value_like(w)]
    if values:
        for ref, text in objects.items():
            if ref not in named_objects and not ref.startswith("events/") and \
                    any(_contains_value(text, value) for value in values):
                named_objects.add(ref)

    named_endpoints = set()
    for endpoint in endpoints:
        short = _ALNUM.sub("", _short(endpoint).lower())
        if endpoint in word_set or (len(short) >= MIN_RUN and short in run_together):
            named_endpoints.add(endpoint)
    object_names = {_parts(ref)[2] for ref in named_objects}
    named_endpoints.update(e for e in endpoints if "/" in e and _short(e) in object_names)
    return tuple(sorted(named_endpoints)), tuple(sorted(named_objects))


def label_names(label: str, ref: str) -> bool:
    """Whether a message label ("update nodes node-2", "WatchEvent DELETED nodes/node-2") names the object: its
    name and its resource, both written as the API writes them (kmodel.checker.labels)."""
    resource, _, name = _parts(ref)
    tokens = re.split(r"[\s/()]+", label)  # a reply names its request in brackets: "200 (get nodes node-2)"
    if name not in tokens:
        return False
    return resource in tokens


def touches(src: str, dst: str, label: str, endpoints: Iterable[str], objects: Iterable[str]) -> bool:
    """Whether a delivered message touches the focus: a named endpoint at either end, or a named object in its
    label."""
    if label == BOOKMARK:
        return False
    named = set(endpoints)
    return src in named or dst in named or any(label_names(label, ref) for ref in objects)
