"""What the checker's rules draw: small numbers that mean something whatever the cluster looks like.

A rule draws an index (`INDEX`) and takes it modulo the list of candidates that exist when it runs (`pick`), so
every draw names a real object, node or component, and shrinks toward the first candidate. The rule families
(machine.py and the mixins beside it) share these so their draws shrink alike.
"""

from __future__ import annotations

import ipaddress

from typing import Any, Sequence

from hypothesis import strategies as st

#: an index into whatever list of candidates exists when the rule runs (taken modulo its length)
INDEX = st.integers(min_value=0, max_value=63)


def pick(index: int, options: Sequence[Any]) -> Any:
    """The candidate `index` names (modulo their number), or None when there is none."""
    return options[index % len(options)] if options else None


# -- small shared pools: values drawn from a few, so that two draws meet (the same label, the same address, the
# same resourceVersion), which is where the API server's guards are. Each lists its simplest value first.

#: label selectors a user sends with a list (kubectl get -l): the apps' labels, every operator the parser knows
#: (=, ==, !=, in, notin, exists, !key, > and <), two selectors that use them all at once (sets with spaces, empty
#: members and a trailing comma; a node's whole-number `example.com/cores` label compared), then the mistakes a
#: user makes, which the API server refuses with 400 and the parser's text (kmodel.apiserver.selectors: an unknown
#: operator, `in` without parentheses, an empty or unclosed set, a trailing comma, a non-integer for `>`, a `!key`
#: followed by an operator, an operator first, two values, a term after a comma that is none, a set without its
#: commas or with an operator in it, a `(` for a value, a set after `in` and then more)
LABEL_SELECTORS: tuple[str, ...] = (
    "", "app=web", "app!=web", "app in (web,api)", "app notin (web)", "app", "!app",
    "app=web,tier!=canary", "run in (debug-1,debug-2),app notin (web)", "app>1",
    "app in (web, api),tier notin (canary,),!beta,app,app!=x,app==web,example.com/cores>2",
    "app in (,web),tier in (a,,b),example.com/cores<9",
    "app ~ web", "app in web", "app in ()", "app in (web", "app=web,", "app>x", "!app=web", "app in (web,)",
    "=web", "app=web web", "app,=x", "app in (web api)", "app in (=)", "app=(", "app in (web)x",
)
#: field selectors (kubectl get --field-selector): `=`, `==` and `!=` on a pod's fields and every kind's name and
#: namespace, then a field the resource does not support and a term without an operator (400)
FIELD_SELECTORS: tuple[str, ...] = (
    "", "metadata.name=web", "metadata.namespace==default", "spec.nodeName=node-1", "status.phase!=Running",
    "spec.nodeName=node-2,status.phase=Running", "spec.replicas=1", "metadata.name",
)
#: which resourceVersion a read names (the rule turns it into a number from the store as it is when it runs):
#: none (a consistent read from etcd), "0" (any, from the watch cache), the newest revision, one behind the
#: object's or the list's, one the cache has not reached (it waits, then 504 Too large resource version), a
#: revision compacted away, and one that is not a number (400)
RESOURCE_VERSIONS: tuple[str, ...] = ("none", "0", "newest", "stale", "future", "compacted", "invalid")
#: how far ahead of the newest revision a `future` read asks
FUTURE_REVISIONS = 1_000


def resource_version(kind: str, store: Any, stale_of: int = 0) -> str:
    """The resourceVersion `kind` (one of RESOURCE_VERSIONS) names now, in `store`; `stale_of` is the revision the
    stale one is one behind (the object's, or the newest)."""
    newest = store.revision
    if kind == "none":
        return ""
    if kind == "0":
        return "0"
    if kind == "newest":
        return str(newest)
    if kind == "stale":
        return str(max(1, (stale_of or newest) - 1))
    if kind == "future":
        return str(newest + FUTURE_REVISIONS)
    if kind == "compacted":
        return str(max(1, store.compact_revision - 1))
    if kind == "invalid":
        return "latest"
    raise ValueError(f"unknown resourceVersion kind {kind!r}; known: {', '.join(RESOURCE_VERSIONS)}")


#: ClusterIPs a Service asks for (spec.clusterIP) in the default service CIDR, beside "taken" (the one an existing
#: Service holds, drawn when the rule runs): a free address of the service CIDR, the range's first (kubernetes'
#: own), its network address and its broadcast address (never allocated), one outside the range, an IPv6 address
#: in an IPv4 cluster, headless ("None"), not an address at all; `cluster_ips` gives the same rows for any range
CLUSTER_IPS: tuple[str, ...] = ("taken", "10.96.0.200", "10.96.0.1", "10.96.0.0", "10.111.255.255", "10.0.0.10",
                                "fd00::10", "None", "10.96.0")


def cluster_ips(service_cidr: str) -> tuple[str, ...]:
    """CLUSTER_IPS's rows for the IPv4 service CIDR an example's address plan drew (kmodel.checker.addressplan):
    the free address is the 200th, or the range's last one below the broadcast address in a smaller range."""
    net = ipaddress.ip_network(service_cidr)
    free = net.network_address + min(200, net.num_addresses - 2)
    return ("taken", str(free), str(net.network_address + 1), str(net.network_address),
            str(net.broadcast_address), *CLUSTER_IPS[5:])
