"""Bound service account tokens: what POST serviceaccounts/<name>/token issues (a TokenRequest), and what the
token authenticator then accepts (pkg/serviceaccount: claims.go and jwt.go; pkg/registry/core/serviceaccount/
storage/token.go).

Theory of operation
-------------------
A token is a JWT whose claims are upstream's: `iss` and `aud` the API server's issuer (or the audiences the
request asked for), `sub` system:serviceaccount:<namespace>:<name>, `iat`/`nbf`/`exp` in Unix seconds of the
model's logical clock, `jti` a UUID, and `kubernetes.io` with the namespace and the service account's name and
uid. Upstream signs with the API server's RSA key (RS256); the model signs with HMAC-SHA256 (HS256) under a key
derived from the cluster's seed, so that every replica verifies what any replica issued, a run and its replay
issue the same tokens (the `jti` is drawn from the replica's seeded random source, like a uid), and no key
material has to be kept. A client of `kmodel serve` never sees these tokens: the HTTP server hands it a token
of its own drawn at random for the run (kmodel.serve.credentials).

`verify` is the authenticator's side, in upstream's order: the signature, the audience (the API server's own
must be among the token's), expiry (`exp` past: 401), then the service account: it must still exist, not be
being deleted, and have the uid the token names (a service account deleted and made again under its name does
not inherit the old one's tokens). The user is system:serviceaccount:<namespace>:<name> in groups
system:serviceaccounts and system:serviceaccounts:<namespace>.

Not modelled: tokens bound to a Pod, Secret or Node (boundObjectRef: refused with 400), the legacy token Secrets
(kubernetes.io/service-account-token Secrets are stored as any Secret, and their `token` key is not a
credential), and the kubelet's projected-volume refresh.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
from typing import Any, Callable, Optional

from kmodel.objects.logical_time import EPOCH

#: the API server's issuer and default audience (--service-account-issuer of kubeadm clusters)
ISSUER = "https://kubernetes.default.svc.cluster.local"
#: TokenRequest defaults and bounds (ValidateTokenRequest: at least 10 minutes, at most 2^32 seconds)
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
_HEADER = {"alg": "HS256", "typ": "JWT"}
_EPOCH_SECONDS = int(EPOCH.timestamp())


def signing_key(seed: int) -> bytes:
    """The cluster's token signing key: a pure function of its seed (see the module docstring)."""
    return hashlib.sha256(f"kmodel/serviceaccount-signing-key/{seed}".encode()).digest()


def unix_seconds(ms: int) -> int:
    """Unix seconds of a logical time."""
    return _EPOCH_SECONDS + ms // 1000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(key: bytes, signing_input: str) -> str:
    return _b64(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())


def issue(key: bytes, *, namespace: str, name: str, uid: str, audiences: tuple, expiration_seconds: int, now: int,
          rng: random.Random) -> str:
    """A signed token for the service account namespace/name (uid) issued at logical time `now`."""
    iat = unix_seconds(now)
    jti = "%032x" % rng.getrandbits(128)
    claims = {"aud": list(audiences), "exp": iat + expiration_seconds, "iat": iat, "iss": ISSUER,
              "jti": f"{jti[:8]}-{jti[8:12]}-{jti[12:16]}-{jti[16:20]}-{jti[20:]}",
              "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}},
              "nbf": iat, "sub": f"system:serviceaccount:{namespace}:{name}"}
    signing_input = (_b64(json.dumps(_HEADER, separators=(",", ":")).encode()) + "."
                     + _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode()))
    return signing_input + "." + _sign(key, signing_input)


def looks_like_jwt(token: str) -> bool:
    """Three dot-separated parts, as upstream's JWT authenticator first checks (anything else is not its)."""
    return token.count(".") == 2 and token.startswith("eyJ")


def verify(key: bytes, token: str, now: int,
           service_account: Callable[[str, str], Optional[Any]]) -> Optional[tuple[str, str]]:
    """(namespace, name) of the service account a token authenticates, or None when the token is not valid now
    (see the module docstring). `service_account(namespace, name)` reads the stored ServiceAccount (None if
    absent)."""
    signing_input, _, signature = token.rpartition(".")
    if not hmac.compare_digest(_sign(key, signing_input), signature):
        return None
    try:
        claims = json.loads(_unb64(signing_input.partition(".")[2]))
        namespace = claims["kubernetes.io"]["namespace"]
        name = claims["kubernetes.io"]["serviceaccount"]["name"]
        uid = claims["kubernetes.io"]["serviceaccount"]["uid"]
        audiences, exp, nbf = claims["aud"], claims["exp"], claims["nbf"]
    except (ValueError, KeyError, TypeError):
        return None
    seconds = unix_seconds(now)
    if ISSUER not in audiences or seconds >= exp or seconds < nbf:
        return None
    sa = service_account(namespace, name)
    if sa is None or sa.metadata.uid != uid or sa.metadata.deletion_timestamp is not None:
        return None
    return namespace, name
