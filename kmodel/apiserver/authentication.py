"""Authentication: a bearer token becomes a user (name and groups), or the request gets 401.

Like kube-apiserver with a static token file (--token-auth-file) and anonymous auth on (the default):

* a known token → its `UserInfo`, plus the group `system:authenticated` (added to every authenticated user);
* the empty token → `system:anonymous` in group `system:unauthenticated`, which then meets authorization;
* any other token → 401 Unauthorized (message "Unauthorized").

`default_tokens(node_names, controller_accounts)` is the model's token table. Token strings (documented here because tests and
the cluster use them):

    "admin-token"                   admin                           system:masters
    "scheduler-token"               system:kube-scheduler
    "controller-manager-token"      system:kube-controller-manager  (its informers: the shared informer factory)
    "sa-<sa>-token"                 system:serviceaccount:kube-system:<sa>
                                                                    system:serviceaccounts,
                                                                    system:serviceaccounts:kube-system
        for each controller's service account <sa> (`controller_accounts`, which the cluster takes from the
        components' registrations: deployment-controller, replicaset-controller, endpoint-controller,
        generic-garbage-collector, namespace-controller, node-controller, pod-garbage-collector,
        statefulset-controller, job-controller, ttl-after-finished-controller, service-account-controller,
        endpointslice-controller): kube-controller-manager runs each
        controller under its own service account, as with --use-service-account-credentials (kubeadm's default). The static token stands in for the
        service account's token (these kube-system ServiceAccounts are not stored as objects)
    "proxy-token"                   system:kube-proxy
    "node-<name>-token"             system:node:<name>              system:nodes
    "<user>-token" for alice, bob   alice / bob                     (no extra group)
    "sa-default-builder-token"      system:serviceaccount:default:builder   system:serviceaccounts,
                                                                    system:serviceaccounts:default
        a user's service account (USER_SERVICE_ACCOUNTS), with no rights until a binding grants some

Beside the table, the authenticator accepts the bound service account tokens the API server issues through
POST serviceaccounts/<name>/token (`bound_tokens`, kmodel.apiserver.serviceaccount_tokens): a token that verifies
is the service account's user, as `service_account_user` builds it; one that does not is 401.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Union

import attrs

from kmodel.apiserver import errors

AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
MASTERS = "system:masters"
NODES = "system:nodes"
NODE_PREFIX = "system:node:"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS = "system:serviceaccounts"
KUBE_SYSTEM = "kube-system"
CONTROLLER_MANAGER_TOKEN = "controller-manager-token"


@attrs.frozen
class UserInfo:
    name: str
    groups: tuple = ()

    def is_node(self) -> bool:
        return self.name.startswith(NODE_PREFIX) and NODES in self.groups

    @property
    def node_name(self) -> str:
        """The node of a kubelet identity ("" for anyone else)."""
        return self.name[len(NODE_PREFIX):] if self.is_node() else ""


ANONYMOUS_USER = UserInfo(ANONYMOUS, (UNAUTHENTICATED,))


def user(name: str, *groups: str) -> UserInfo:
    """An authenticated user as the token authenticator returns it (system:authenticated appended)."""
    return UserInfo(name, tuple(groups) + (AUTHENTICATED,))


def node_token(node: str) -> str:
    return f"node-{node}-token"


def service_account_name(name: str, namespace: str = KUBE_SYSTEM) -> str:
    """The user name a service account authenticates as: ``system:serviceaccount:<namespace>:<name>``."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def service_account_user(name: str, namespace: str = KUBE_SYSTEM) -> UserInfo:
    """A service account as the token authenticator returns it (its two groups, then system:authenticated)."""
    return user(service_account_name(name, namespace), SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}")


def service_account_token(name: str) -> str:
    """The model's token of the kube-system service account `name`."""
    return f"sa-{name}-token"


#: service accounts of users' workloads, (namespace, name): known by a token, no rights of their own
USER_SERVICE_ACCOUNTS: tuple[tuple[str, str], ...] = (("default", "builder"),)


def user_service_account_token(namespace: str, name: str) -> str:
    """The model's token of the service account `name` in `namespace` (one of USER_SERVICE_ACCOUNTS)."""
    return f"sa-{namespace}-{name}-token"


def default_tokens(node_names: Iterable[str] = (), controller_accounts: Iterable[str] = ()) -> dict[str, UserInfo]:
    """The model's identities by token (see the module docstring): `controller_accounts` are the kube-system
    service accounts kube-controller-manager's controllers run as (the cluster knows them from the components'
    registrations: the API server never reads the registry)."""
    tokens = {
        "admin-token": user("admin", MASTERS),
        "scheduler-token": user("system:kube-scheduler"),
        CONTROLLER_MANAGER_TOKEN: user("system:kube-controller-manager"),
        "proxy-token": user("system:kube-proxy"),
        "alice-token": user("alice"),
        "bob-token": user("bob"),
    }
    for account in controller_accounts:
        tokens[service_account_token(account)] = service_account_user(account)
    for namespace, account in USER_SERVICE_ACCOUNTS:
        tokens[user_service_account_token(namespace, account)] = service_account_user(account, namespace)
    for node in node_names:
        tokens[node_token(node)] = user(NODE_PREFIX + node, NODES)
    return tokens


class TokenAuthenticator:
    """Static bearer tokens. Nodes not in the table are authenticated by their `node-<name>-token`
    (the model's stand-in for kubelet client certificates, so a cluster can add nodes without rebuilding
    the table)."""

    #: what invariants may read of it (kmodel.invariants.records): the token table
    RECORDS: frozenset[str] = frozenset({"tokens"})

    def __init__(self, tokens: Mapping[str, UserInfo] | None = None, *, node_tokens: bool = True,
                 bound_tokens: Optional[Callable[[str], Optional[UserInfo]]] = None) -> None:
        self.tokens = dict(default_tokens() if tokens is None else tokens)
        self.node_tokens = node_tokens
        #: the user of a bound service account token, None when it does not verify (see the module docstring)
        self.bound_tokens = bound_tokens

    def authenticate(self, token: str) -> UserInfo:
        """The user for `token`; raises APIError(401) for an unknown one."""
        if not token:
            return ANONYMOUS_USER
        found = self.tokens.get(token)
        if found is not None:
            return found
        if self.node_tokens and token.startswith("node-") and token.endswith("-token") and len(token) > 11:
            found = user(NODE_PREFIX + token[5:-6], NODES)
            self.tokens[token] = found  # one UserInfo per node, shared by all its requests
            return found
        if self.bound_tokens is not None:
            found = self.bound_tokens(token)
            if found is not None:
                return found
        raise errors.unauthorized()


AuthResult = Union[UserInfo, errors.APIError]
