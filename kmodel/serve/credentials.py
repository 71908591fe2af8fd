"""The bearer tokens outside clients of one `kmodel serve` run hold, drawn at random for that run.

Theory of operation
-------------------
Inside, the model authenticates its own fixed tokens (``admin-token``, ``alice-token``, ...,
kmodel.apiserver.authentication), which every run and every replay share: the model stays deterministic and a
recorded run replays without knowing what the clients held. Anyone who knows the code knows those tokens, so
they never cross the HTTP boundary. Each run draws one token per person from the `secrets` module instead (the
kubeconfig is the only place they are written), and the HTTP server exchanges a client's token for the model's
before the request enters the model:

    the token of a person of this run       that person's model token (then RBAC, as for any request)
    no token                                no token: system:anonymous, as kube-apiserver's anonymous auth
    any other token (admin-token included)  REFUSED, a token the model's authenticator answers 401 Unauthorized

So the trace records model tokens only: it replays as it did, and holds nothing a client could use.

A service account token the model issues (POST serviceaccounts/<name>/token) is a model token too, predictable
from the run's seed: the client gets a token drawn for it instead (`issue`), which then stands for it.
"""

from __future__ import annotations

import secrets
from typing import Sequence

#: what an unknown client token becomes: no token of the model's table, nor of its node-<name>-token pattern
REFUSED = "refused-not-a-token-of-this-run"
#: random bytes per token (256 bits, as kubeadm's bootstrap tokens are far shorter and still not guessed)
TOKEN_BYTES = 32


class Credentials:
    """One run's client tokens: `people` are (name, model token) pairs; `users` is what the kubeconfig gets,
    (name, client token) in the same order."""

    def __init__(self, people: Sequence[tuple[str, str]]) -> None:
        self.users: list[tuple[str, str]] = []
        self._model_token: dict[str, str] = {}
        for name, model_token in people:
            token = secrets.token_urlsafe(TOKEN_BYTES)
            self.users.append((name, token))
            self._model_token[token] = model_token

    def issue(self, model_token: str) -> str:
        """A new client token that stands for `model_token` (a service account token the model issued)."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        self._model_token[token] = model_token
        return token

    def model_token(self, client_token: str) -> str:
        """The model's token for what a client sent (see the module docstring)."""
        if not client_token:
            return ""
        return self._model_token.get(client_token, REFUSED)
