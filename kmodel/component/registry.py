"""Which components a cluster can run: each one joins the model by one registration.

Theory of operation
-------------------
A component joins by decorating its factory (`make(ctx: ClusterContext) -> list[Component]`; a component that
builds an ApiClient hands it `ctx.switches`, the cluster's variant and fixes: kmodel.switches) or, for a
controller, its class:

    @controller("deployment", service_account="deployment-controller", rbac_rules=(...), default=True)
    def make(ctx): ...

The registration says everything the cluster needs to know about it, in one place:

* `name`: what `ClusterConfig.components` calls it (and `kmodel check --component`);
* `process`: the process its components run in. KUBE_CONTROLLER_MANAGER: one copy per controller manager
  (`ClusterConfig.controller_managers`), crashing and restarting with the other controllers of that copy;
  KUBE_SCHEDULER: one copy per scheduler; "" (the default of `component`): one copy, a process of its own;
* `service_account` and `rbac_rules`: the kube-system service account its requests authenticate as (the cluster
  knows its token) and the rules of its role `system:controller:<account>`, installed at boot and bound to it
  (upstream's controller_policy.go). Several registrations may share an account (node lifecycle and node IPAM
  run as node-controller, as upstream): one of them declares the rules, the others none;
* `default`: a default cluster runs it (`DEFAULT_COMPONENTS`);
* `invariants`: guarantees of its own, checked whenever a cluster runs it (kmodel.checker.session);
* `sometimes`: situations of its own the exploration should reach (invariants/sometimes.py), counted by every
  run of a cluster that runs it;
* `boot_objects`: objects the cluster creates at boot, after the bootstrap policy (a CustomResourceDefinition
  an operator serves, a first custom object for it to act on).

Built-in registrations live in the modules of BUILTIN_PACKAGES, all imported the first time the registry is
read, so a new module there needs nothing but its decorator. Their roles and tokens are installed in every
cluster, as upstream's bootstrap policy installs every controller's role whichever controllers run: the cluster
reads them here (`builtin_controller_roles`, `controller_service_accounts`) and hands them to the API server,
which never imports the registry (it would load every component; tests/test_imports.py places this module in
the components' layer, above the API server, and counts the modules it loads by name as its imports).

A component of your own is named in `ClusterConfig.components` by its import path, ``package.module:attr``
(the decorated factory or class), or by the name of an entry point of the group ``kmodel.components`` that an
installed package declares (its value the same import path). The path is what a trace records, so a replay in
another process imports the same module and rebuilds the same component; the working folder is on the import
path for it (last, so that it never shadows an installed module), as it is for `python -m`. Only the
components a cluster names are built, and only their roles, tokens, invariants and boot objects installed:
what else a process happens to have imported never changes a cluster.

`DEFAULT_COMPONENTS` is in name order: nothing depends on the order a cluster builds its components in (the
loop orders them by name).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from typing import Any, Callable, Optional, Sequence

import attrs

#: the process names of `Registration.process`
KUBE_CONTROLLER_MANAGER = "kube-controller-manager"
KUBE_SCHEDULER = "kube-scheduler"
#: where the built-in registrations are: every module of a package named here, or a module named here (imported
#: when a default ClusterConfig is first made, so none of them may import kmodel.cluster's package at its top)
BUILTIN_PACKAGES: tuple[str, ...] = ("kmodel.controllers", "kmodel.scheduler", "kmodel.kubelet", "kmodel.proxy",
                                     "kmodel.traffic", "kmodel.etcdctl")
#: the entry point group through which an installed package offers components
ENTRY_POINT_GROUP = "kmodel.components"
#: the attribute a decorated factory or class carries its registration in
REGISTRATION_ATTR = "__kmodel_registration__"


class ComponentError(ValueError):
    """A component name or import path that names no registered component (one line: what is wrong)."""


@attrs.frozen
class Registration:
    """One component's registration (see the module docstring)."""

    name: str
    factory: Callable[[Any], list] = attrs.field(eq=False, repr=False)
    process: str = ""
    service_account: str = ""
    rbac_rules: tuple = ()
    default: bool = False
    invariants: tuple = ()
    boot_objects: tuple = attrs.field(default=(), eq=False, repr=False)
    sometimes: tuple = ()
    #: where it was registered, ``module:attr`` (a component of your own is named by it)
    path: str = ""

    @property
    def builtin(self) -> bool:
        return self.path.startswith("kmodel.")


_BUILTIN: dict[str, Registration] = {}
_loaded: list[bool] = []


def component(name: str, *, process: str = "", service_account: str = "", rbac_rules: Sequence[Any] = (),
              default: bool = False, invariants: Sequence[Any] = (), boot_objects: Sequence[Any] = (),
              sometimes: Sequence[Any] = ()) -> Callable[[Any], Any]:
    """Register the decorated factory `make(ctx) -> list[Component]` (or `Controller` subclass, see
    `controller`) as the component `name` (see the module docstring)."""
    if not name or ":" in name or "/" in name:
        raise ValueError(f"component name {name!r}: give a short name without ':' or '/' (e.g. 'pod-labeler')")

    def register(target: Any) -> Any:
        path = f"{target.__module__}:{target.__qualname__}"
        if inspect.isclass(target):
            if not service_account:
                raise ValueError(f"{path}: a controller class registers with its service_account")
            target.service_account = service_account
            target.rbac_rules = tuple(rbac_rules)
            factory = _class_factory(target, name)
        else:
            factory = target
        registration = Registration(name, factory, process, service_account, tuple(rbac_rules), default,
                                    tuple(invariants), tuple(boot_objects), tuple(sometimes), path)
        setattr(target, REGISTRATION_ATTR, registration)
        if registration.builtin:
            if name in _BUILTIN and _BUILTIN[name].path != path:
                raise ValueError(f"component {name!r} is registered twice: {_BUILTIN[name].path} and {path}")
            _BUILTIN[name] = registration
        return target

    return register


def controller(name: str, *, service_account: str, rbac_rules: Sequence[Any] = (),
               process: str = KUBE_CONTROLLER_MANAGER, default: bool = False, invariants: Sequence[Any] = (),
               boot_objects: Sequence[Any] = (), sometimes: Sequence[Any] = ()) -> Callable[[Any], Any]:
    """Register a controller: `component` with its service account required and kube-controller-manager as its
    process. On a `Controller` subclass, the class is given `service_account` and `rbac_rules`, and each copy is
    built with Controller's own constructor, ``cls(ctx.named("controller/<name>"), ctx.apiservers,
    switches=ctx.switches)``."""
    return component(name, process=process, service_account=service_account, rbac_rules=rbac_rules,
                     default=default, invariants=invariants, boot_objects=boot_objects, sometimes=sometimes)


def _class_factory(cls: type, name: str) -> Callable[[Any], list]:
    def make(ctx: Any) -> list:
        return [cls(ctx.named(f"controller/{name}"), ctx.apiservers, switches=ctx.switches)]

    make.__qualname__ = f"{cls.__qualname__}.make"
    return make


def _load_builtins() -> None:
    if _loaded:
        return
    _loaded.append(True)
    for package_name in BUILTIN_PACKAGES:
        package = importlib.import_module(package_name)
        for module in sorted(m.name for m in pkgutil.iter_modules(getattr(package, "__path__", []))):
            importlib.import_module(f"{package_name}.{module}")


def builtin_registrations() -> list[Registration]:
    """Every built-in registration, by name."""
    _load_builtins()
    return [_BUILTIN[name] for name in sorted(_BUILTIN)]


def default_components() -> tuple[str, ...]:
    """The components a default cluster runs, by name."""
    return tuple(r.name for r in builtin_registrations() if r.default)


def controller_service_accounts() -> tuple[str, ...]:
    """The service accounts the built-in controllers run as, sorted."""
    return tuple(sorted({r.service_account for r in builtin_registrations() if r.service_account
                         and r.process == KUBE_CONTROLLER_MANAGER}))


def builtin_controller_roles() -> list[tuple[str, tuple]]:
    """(service account, its rules) of every built-in controller, by account: what the bootstrap policy installs
    in every cluster (kmodel.apiserver.bootstrap_policy)."""
    return roles_by_account(builtin_registrations())


def roles_by_account(registrations: Sequence[Registration]) -> list[tuple[str, tuple]]:
    """(service account, its rules) for each account `registrations` name with rules, sorted by account; a
    ValueError when two registrations give one account different rules."""
    rules: dict[str, tuple] = {}
    declared_by: dict[str, str] = {}
    for r in registrations:
        if not r.service_account or not r.rbac_rules:
            continue
        if r.service_account in rules and rules[r.service_account] != r.rbac_rules:
            raise ValueError(f"service account {r.service_account!r} is given different rbac_rules by "
                             f"{declared_by[r.service_account]} and {r.path}: let one declare them")
        rules[r.service_account] = r.rbac_rules
        declared_by[r.service_account] = r.path
    return [(account, rules[account]) for account in sorted(rules)]


def resolve(spec: str) -> Registration:
    """The registration `spec` names: a built-in's name, ``package.module:attr``, or an entry point's name of the
    group ``kmodel.components``. ComponentError (one line) when it names none."""
    if ":" in spec:
        return _imported(spec)
    _load_builtins()
    found = _BUILTIN.get(spec)
    if found is not None:
        return found
    point = _entry_point(spec)
    if point is not None:
        return _imported(point, f"entry point {spec!r} ({ENTRY_POINT_GROUP}) names ")
    known = ", ".join(sorted(_BUILTIN))
    raise ComponentError(f"unknown component {spec!r}: name a built-in one ({known}), a registered factory as "
                         f"package.module:factory, or an entry point of the group {ENTRY_POINT_GROUP}")


def _entry_point(name: str) -> Optional[str]:
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        if point.name == name:
            return point.value
    return None


def _imported(path: str, said: str = "") -> Registration:
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ComponentError(f"{said}{path!r}: write a component of your own as package.module:factory")
    if "" not in sys.path and "." not in sys.path:
        sys.path.append("")  # the working folder, last: as `python -m` puts it first, but never shadowing
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ComponentError(f"{said}{path!r}: cannot import {module_name} ({exc}); run from the folder that holds "
                             f"the package, or install it") from None
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ComponentError(f"{said}{path!r}: {module_name} has no {attr}")
    registration = getattr(target, REGISTRATION_ATTR, None)
    if not isinstance(registration, Registration):
        raise ComponentError(f"{said}{path!r}: {attr} is not a registered component; decorate it with @controller(...) "
                             f"or @component(...) from kmodel.component.registry")
    return attrs.evolve(registration, path=path) if not registration.builtin else registration


def registrations_of(components: Sequence[str]) -> list[Registration]:
    """The registrations of the components a configuration names, in its order."""
    return [resolve(spec) for spec in components]


def own_registrations(components: Sequence[str]) -> list[Registration]:
    """Of the components a configuration names, those not built in (their roles, tokens, invariants and boot
    objects are the cluster's to install)."""
    return [r for r in registrations_of(components) if not r.builtin]


def component_invariants(components: Sequence[str]) -> list[Any]:
    """The invariants of the components a configuration names, each once, in its order."""
    seen: dict[str, Any] = {}
    for r in registrations_of(components):
        for inv in r.invariants:
            seen.setdefault(inv.name, inv)
    return list(seen.values())


def component_sometimes(components: Sequence[str]) -> list[Any]:
    """The sometimes properties of the components a configuration names, each once, in its order."""
    seen: dict[str, Any] = {}
    for r in registrations_of(components):
        for situation in r.sometimes:
            seen.setdefault(situation.name, situation)
    return list(seen.values())
