"""The pod-deletion-cost annotation (pkg/apis/core/helper: GetDeletionCostFromPodAnnotations, release-1.31).

A pod's `controller.kubernetes.io/pod-deletion-cost` is a 32-bit integer written in decimal: an optional minus
sign, then digits, no leading zero (`0` itself aside) and no plus sign (upstream's validFirstDigit, then
strconv.ParseInt(value, 10, 32)). The API server refuses a pod whose value is not one (ValidatePodSpecificAnnotations:
"must be a 32bit integer"); the ReplicaSet controller ranks pods by it, an absent or invalid value counting as 0.
"""

from __future__ import annotations

from typing import Mapping, Optional

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def parse_deletion_cost(text: str) -> Optional[int]:
    """The cost `text` means, or None when upstream's parse refuses it."""
    if not text or not (text[0] == "-" or text == "0" or "1" <= text[0] <= "9"):
        return None  # validFirstDigit: "+10", "008", "" and anything not a number are refused before parsing
    digits = text[1:] if text[0] == "-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None  # ParseInt: a sign and nothing more, or a character that is not a decimal digit
    value = int(text)
    return value if INT32_MIN <= value <= INT32_MAX else None


def deletion_cost(annotations: Mapping[str, str]) -> Optional[int]:
    """GetDeletionCostFromPodAnnotations: 0 without the annotation, its value, or None when it is invalid."""
    text = annotations.get(POD_DELETION_COST)
    return 0 if text is None else parse_deletion_cost(text)
