"""The backup operator (backup.py) explored as `kmodel check` explores the model: its bug breaks its guarantee
(one runner per Backup), and the test fails with the shrunk trace, its report and the command that replays it."""

from kmodel.cluster import DEFAULT_COMPONENTS, ClusterConfig
from kmodel.pytest_plugin import KmodelMachine, kmodel_test


class BackupMachine(KmodelMachine):
    """A default cluster of two nodes running the backup operator; the checker's rules and faults act on it."""

    config = ClusterConfig(nodes=2, components=(*DEFAULT_COMPONENTS, "examples.operators.backup:BackupOperator"))
    initial_actions = ()  # the operator's Backup is created at boot (its registration's boot objects)
    registered_invariants = False  # check the operator's own guarantee: its registration's invariant


test_backup_operator = kmodel_test(BackupMachine, max_examples=40)
