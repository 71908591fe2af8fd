"""The tenant operator (tenant.py) explored as `kmodel check` explores the model: its guarantees hold."""

from kmodel.cluster import DEFAULT_COMPONENTS, ClusterConfig
from kmodel.pytest_plugin import KmodelMachine, kmodel_test


class TenantMachine(KmodelMachine):
    """A default cluster of two nodes running the tenant operator; the checker's rules and faults act on it."""

    config = ClusterConfig(nodes=2, components=(*DEFAULT_COMPONENTS, "examples.operators.tenant:TenantOperator"))
    initial_actions = ()  # the operator's Tenant is created at boot (its registration's boot objects)
    registered_invariants = False  # check the operator's own guarantees: its registration's invariants


test_tenant_operator = kmodel_test(TenantMachine, max_examples=40)
