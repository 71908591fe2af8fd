"""PriorityClass validation (pkg/apis/scheduling/validation, release 1.31)."""

from __future__ import annotations

from ..field_errors import FieldError, forbidden, invalid, not_supported
from ..scheduling import (
    HIGHEST_USER_DEFINABLE_PRIORITY, PREEMPTION_POLICIES, SYSTEM_PRIORITY_CLASS_PREFIX, PriorityClass,
    system_priority_classes,
)
from .common import IMMUTABLE, validate_object_meta, validate_object_meta_update
from .names import is_dns1123_subdomain


def _known_system_class(pc: PriorityClass) -> str:
    """IsKnownSystemPriorityClass's error, or "" for a system class with its own value and globalDefault."""
    for known in system_priority_classes():
        if known.metadata.name == pc.metadata.name:
            if known.value != pc.value:
                return f"value of {known.metadata.name} PriorityClass must be {known.value}"
            if known.global_default != pc.global_default:
                return f"globalDefault of {known.metadata.name} PriorityClass must be {str(known.global_default).lower()}"
            return ""
    return f"{pc.metadata.name} is not a known system priority class"


def validate_priority_class(pc: PriorityClass) -> list[FieldError]:
    """ValidatePriorityClass: a name with the system- prefix only for the system's own classes, as they are; any
    other class at most HighestUserDefinablePriority; a preemptionPolicy upstream knows."""
    errs = validate_object_meta(pc.metadata, False, is_dns1123_subdomain)
    if pc.metadata.name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        error = _known_system_class(pc)
        if error:
            errs.append(forbidden("metadata.name", f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' "
                                                   f"prefix are reserved for system use only. error: {error}"))
    elif pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(forbidden("value", f"maximum allowed value of a user defined priority is "
                                       f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if pc.preemption_policy is not None and pc.preemption_policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES))
    return errs


def validate_priority_class_update(new: PriorityClass, old: PriorityClass) -> list[FieldError]:
    """ValidatePriorityClassUpdate: value and preemptionPolicy are immutable."""
    errs = validate_object_meta_update(new.metadata, old.metadata)
    if new.value != old.value:
        errs.append(forbidden("value", "may not be changed in an update."))
    if new.preemption_policy != old.preemption_policy:
        errs.append(invalid("preemptionPolicy", new.preemption_policy, IMMUTABLE))
    return errs
