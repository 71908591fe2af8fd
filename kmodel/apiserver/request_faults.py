"""The error answers an API server gives a request it could not serve, for the loop's `FailRequest` fault.

Theory of operation
-------------------
A replica armed with a fault for a client (`APIServerReplica.fail_next_request`) answers the next request of
that client (outside a watch stream) with one of these, as kube-apiserver's filters and handlers do when it is
overloaded, failing, or too slow:

* 429 TooManyRequests: the max-in-flight or priority-and-fairness filter refused it (filters/maxinflight.go
  tooManyRequests: "Too many requests, please try again later.", with a Retry-After header); nothing ran.
* 500 InternalError: a handler failed (errors.NewInternalError, here for an etcd leader change, the commonest
  transient one); nothing was written.
* 503 ServiceUnavailable: the server could not handle it now (errors.NewServiceUnavailable with the generic
  message of StatusReasonServiceUnavailable); nothing was written.
* 504 Timeout: the timeout filter gave up on the handler (filters/timeout.go: errors.NewTimeoutError("request
  did not complete within requested timeout - context deadline exceeded", 0)). The handler may have finished
  its write to etcd or not: the client cannot tell, which is why a 504 is an unknown outcome. The fault says
  which (`applied`).

Only a 429 carries Retry-After here (retryAfterSeconds, which responsewriters turns into the header); client-go
honours it (kmodel.client.api_client). The builders follow k8s.io/apimachinery/pkg/api/errors of Kubernetes
1.28-1.32.
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver.errors import StatusDetails
from kmodel.apiserver.wire import Status

TOO_MANY_REQUESTS = "Too many requests, please try again later."
SERVICE_UNAVAILABLE = "the server is currently unable to handle the request"
LEADER_CHANGED = "Internal error occurred: etcdserver: leader changed"
REQUEST_TIMEOUT = "Timeout: request did not complete within requested timeout - context deadline exceeded"


def fault_status(code: int, retry_after_seconds: int = 0) -> Status:
    """The metav1.Status kube-apiserver answers with for the error `code` (429, 500, 503 or 504)."""
    details = StatusDetails(retry_after_seconds=retry_after_seconds) if retry_after_seconds else None
    if code == 429:
        return Status(429, "TooManyRequests", TOO_MANY_REQUESTS, details)
    if code == 500:
        return Status(500, "InternalError", LEADER_CHANGED, details)
    if code == 503:
        return Status(503, "ServiceUnavailable", SERVICE_UNAVAILABLE, details)
    if code == 504:
        return Status(504, "Timeout", REQUEST_TIMEOUT, details)
    raise ValueError(f"no request fault answers with {code}")

