"""A metav1.LabelSelector matched against labels, computed by the invariants for themselves (never the API
server's kmodel.apiserver.selectors, which the controllers match with: a mistake there must not move the oracle).

Upstream apimachinery (1.31) LabelSelectorAsSelector: a nil selector selects nothing, an empty one everything;
matchLabels require equal values; matchExpressions' In (present, value among the values), NotIn (absent, or
value not among them), Exists (present), DoesNotExist (absent); any other operator is invalid.
"""

from __future__ import annotations

from typing import Any, Mapping


class InvalidSelector(ValueError):
    """A matchExpression with an operator LabelSelectorAsSelector refuses."""


def _expression_matches(operator: str, key: str, values: tuple, labels: Mapping[str, str]) -> bool:
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise InvalidSelector(f'"{operator}" is not a valid label selector operator')


def selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    """`selector` (a LabelSelector object, or None) selects `labels`; raises InvalidSelector for an operator
    upstream refuses, whatever the labels."""
    if selector is None:
        return False
    verdicts = [_expression_matches(e.operator, e.key, tuple(e.values), labels) for e in selector.match_expressions]
    return all(labels.get(k) == v for k, v in selector.match_labels.items()) and all(verdicts)
