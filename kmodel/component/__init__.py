"""The sans-IO component protocol: handlers get one input and an `Out`, and return effects as data.

See `kmodel.component.protocol` (the handlers) and `kmodel.component.effects` (the effects).
"""

from kmodel.component.effects import CancelTimer, CloseStream, Effect, Out, Send, SetTimer
from kmodel.component.protocol import Component, HealthCheck

__all__ = ["CancelTimer", "CloseStream", "Component", "Effect", "HealthCheck", "Out", "Send", "SetTimer"]
