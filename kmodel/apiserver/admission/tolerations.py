"""DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds).

On pod create, add `node.kubernetes.io/not-ready:NoExecute` and `node.kubernetes.io/unreachable:NoExecute`
tolerations (operator Exists, tolerationSeconds 300) unless the pod already tolerates them: a toleration
tolerates one when its key is that key or empty and its effect is NoExecute or empty.
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver.admission.attributes import CREATE, AdmissionAttributes
from kmodel.apiserver.fastevolve import evolve
from kmodel.objects.fastevolve import with_spec
from kmodel.objects.core import Toleration
from kmodel.memo import POD_SPEC_MEMO_SIZE, identity_memo

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300

NOT_READY_TOLERATION = Toleration(key=NOT_READY, operator="Exists", effect="NoExecute",
                                  toleration_seconds=DEFAULT_TOLERATION_SECONDS)
UNREACHABLE_TOLERATION = Toleration(key=UNREACHABLE, operator="Exists", effect="NoExecute",
                                    toleration_seconds=DEFAULT_TOLERATION_SECONDS)


def _tolerates(tolerations: tuple, key: str) -> bool:
    return any((t.key == key or not t.key) and (t.effect in ("NoExecute", "")) for t in tolerations)


def with_default_tolerations(spec: Any) -> Any:
    """The pod spec with the two NoExecute tolerations added where missing (the same spec if none is)."""
    tolerations = spec.tolerations
    added = []
    if not _tolerates(tolerations, NOT_READY):
        added.append(NOT_READY_TOLERATION)
    if not _tolerates(tolerations, UNREACHABLE):
        added.append(UNREACHABLE_TOLERATION)
    if not added:
        return spec
    return evolve(spec, tolerations=tolerations + tuple(added))


# pods of one template share their spec object: so do their admitted specs (and validation memoises on them)
_with_default_tolerations = identity_memo(with_default_tolerations, maxsize=POD_SPEC_MEMO_SIZE)


def admit(a: AdmissionAttributes) -> Any:
    pod = a.obj
    if a.operation != CREATE or a.resource.name != "pods" or a.subresource:
        return pod
    return with_spec(pod, _with_default_tolerations(pod.spec))
