"""`Switches`: what a cluster switches on, as one value its components are built with.

A variant (kmodel.variants) and the fixes of upstream bugs (kmodel.fixes) are switches, each read at one named
place. The cluster builds every component with one `Switches` (`ClusterContext.switches`, kmodel.cluster.components),
and a component hands it to its `ApiClient` at construction (kmodel.client.api_client), so no switch is set on a
component after it is built. A component or client built without one runs the model as Kubernetes is built.
"""

from __future__ import annotations

import attrs

from kmodel.variants import DEFAULT


@attrs.frozen
class Switches:
    """The switches of one cluster (see the module docstring)."""

    #: the anti-pattern variant the model runs (kmodel.variants); "default" is Kubernetes as it is built
    variant: str = DEFAULT
    #: the fixes of upstream bugs that are on (kmodel.fixes)
    fixes: frozenset[str] = frozenset()
    #: the bearer tokens whose updates take the pessimistic-locking variant's lock: the built-in controllers'
    #: service accounts, to which the bootstrap policy binds the lock's role (kmodel/client/pessimistic_locking.py)
    lock_holders: frozenset[str] = frozenset()

    def on(self, fix: str) -> bool:
        """Is the fix `fix` (a name of kmodel.fixes) on?"""
        return fix in self.fixes


#: the model as Kubernetes is built: no variant, no fix
DEFAULT_SWITCHES = Switches()
