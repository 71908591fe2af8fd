"""The config-data rule: a user's kubectl apply or delete of a ConfigMap or a Secret (a mixin of `KmodelMachine`).

    apply_config_data   kubectl apply of a ConfigMap or a Secret in a shape of kmodel.checker.config_data_actions'
                        tables (data and binaryData, invalid keys, immutable objects changed, each Secret
                        type's required keys present or missing, a type change), or kubectl delete of it

Two names per kind, so that an apply meets what an earlier one stored: an immutable object changed, a Secret's
type changed. The shape is drawn uniformly from its table (every row comes up in a dev run) and shrinks toward
the first, a plain object.
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import strategies as st

from kmodel.checker.config_data_actions import CONFIG_NAMES, SHAPES, ApplyConfigData
from kmodel.checker.draws import INDEX, pick
from kmodel.checker.rulebook import RuleFamily, rule

#: the resources drawn, ConfigMaps first
RESOURCES = tuple(CONFIG_NAMES)
#: a shape is drawn below the longest table's length and taken modulo the drawn resource's
ROWS = max(len(shapes) for shapes in SHAPES.values())


class ConfigDataRules(RuleFamily):
    """The rule applying ConfigMaps and Secrets. Mixed into `KmodelMachine` (which provides `cluster` and `_do`)."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    @rule(resource=st.integers(0, len(RESOURCES) - 1), i=INDEX, shape=st.integers(0, ROWS - 1))
    def apply_config_data(self, resource: int, i: int, shape: int) -> None:
        """Draws: a ConfigMap (`settings`, `flags`) or a Secret (`creds`, `certs`) of the default namespace; a
        shape (`CONFIGMAP_SHAPES`, `SECRET_SHAPES` in `kmodel/checker/config_data_actions.py`)
        Does: `kubectl apply` of the object in that shape, or `kubectl delete` of it (`apply-config-data`):
        ConfigMaps with data, binaryData, a key with a slash or `..` (422), a key in both maps (422), immutable
        and then changed (422); Secrets with data or stringData, of the basic-auth, TLS, dockerconfigjson and
        service-account-token types with their required keys or without (422), a type changed (422), immutable
        Shrinks to: the ConfigMap `settings` with plain data"""
        name = RESOURCES[resource]
        self._do(ApplyConfigData(name, pick(i, CONFIG_NAMES[name]), pick(shape, SHAPES[name])))
