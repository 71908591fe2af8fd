"""A whole cluster wired together: etcd, API server replicas, kubectl, and the components the config names.

Theory of operation
-------------------
`Cluster(config)` builds, in this order:

1. the store, booted the way kube-apiserver's bootstrap controllers leave a new cluster: the bootstrap
   RBAC policy, the namespaces default, kube-system, kube-public and kube-node-lease, and the `kubernetes`
   Service (10.96.0.1 in the default service CIDR) with Endpoints naming the replicas (172.18.1.x:6443). These writes go through the request pipeline as the
   cluster admin at time 0, so they carry uids, timestamps and resourceVersions like everything else;
2. the network, the etcd endpoint and `config.apiservers` replicas ("apiserver-0", ...), each with its own
   watch cache, all sharing one audit trail and one ClusterIP allocator (upstream keeps the allocator in
   etcd);
3. `kubectl`, the user's client (kmodel.cluster.kubectl);
4. the components named in `config.components`, each built by its registered factory (kmodel.component.registry)
   from a `ClusterContext`: a kube-controller-manager's controllers once per controller manager, the scheduler
   once per scheduler. A component of your own named there also gets its service account's token, its role
   and its boot objects (after the bootstrap policy), as does an `extra` component its token and role;
5. the loop over all of them, started at logical time 0.

Everything after that happens through the loop. The helpers here (`apply`, `run`, the faults) are the
outside world's hands: a user typing, an operator pulling a cable. Reads (`objects`) look at the store
directly, as an observer outside the model; no component does.
"""

from __future__ import annotations

import random
from typing import Any, Iterable, Optional, Sequence

import attrs

from kmodel.apiserver import customresources
from kmodel.apiserver.audit import AuditLog
from kmodel.apiserver.authentication import default_tokens, service_account_token, service_account_user, user
from kmodel.apiserver.bootstrap_policy import bootstrap_policy, controller_role
from kmodel.apiserver.etcd_endpoint import EtcdServer
from kmodel.apiserver.pipeline import Pipeline, PipelineConfig
from kmodel.apiserver.replica import APIServerReplica
from kmodel.apiserver.resources import RESOURCES, list_prefix
from kmodel.apiserver.wire import Request
from kmodel.cluster.components import CONTROLLER_MANAGER, ClusterContext, instance_name, wire
from kmodel.component.registry import (
    KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER, Registration, builtin_controller_roles, controller_service_accounts, resolve,
    roles_by_account,
)
from kmodel.cluster.config import ClusterConfig
from kmodel.cluster.kubectl import Apply, Command, Delete, Kubectl, manifest_name, resource_of_manifest
from kmodel.component import Component
from kmodel.ipam.serviceip import ServiceIPAllocator, kubernetes_service_ip
from kmodel.loop import Loop
from kmodel.loop.events import AdvanceTime, Crash, DropHead, Heal, Partition, Restart
from kmodel.network import Network
from kmodel.objects.discovery import SERVICE_NAME_LABEL, Endpoint, EndpointConditions, EndpointSlice, EndpointSlicePort
from kmodel.objects.scheduling import system_priority_classes
from kmodel.objects import (
    EndpointAddress, EndpointPort, Endpoints, EndpointSubset, Namespace, ObjectMeta, Service, ServicePort,
    ServiceSpec, frozen_map,
)
from kmodel.store import Store, prefix_end
from kmodel.controllers.manager import ControllerManager
from kmodel.controllers.shared_informers import SHARED_INFORMERS, SharedInformers
from kmodel.fixes import ETCD_KEEP_COMPACTION_TOMBSTONE, LEADERELECTION_FENCE_WRITES, LEADERELECTION_RESET_ON_EXIT

BOOT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def user_token(name: str) -> str:
    """The bearer token of a user the cluster knows (ClusterConfig.users, and alice and bob)."""
    return f"{name}-token"


class ClusterError(ValueError):
    """A request the cluster's outside-world helpers cannot carry out (unknown target, ...)."""


def apiserver_ip(name: str) -> str:
    """The address of API server replica `apiserver-i`: 172.18.1.(i+1), beside the nodes' 172.18.0.x."""
    return f"172.18.1.{int(name.rpartition('-')[2]) + 1}"


def boot_objects(service_cidr: str, apiservers: list[str]) -> list:
    """What a new cluster holds before anyone acts: RBAC bootstrap policy (with every built-in controller's role,
    whichever the cluster runs, as upstream installs them), the four namespaces, and the
    `kubernetes` Service with its Endpoints and EndpointSlice (kube-apiserver's endpoint reconciler keeps them in a real cluster;
    here the replicas are fixed, so they are written once)."""
    endpoints = Endpoints(
        metadata=ObjectMeta(name="kubernetes", namespace="default",
                            labels=frozen_map({"endpointslice.kubernetes.io/skip-mirror": "true"})),
        subsets=(EndpointSubset(addresses=tuple(EndpointAddress(ip=apiserver_ip(a)) for a in apiservers),
                                ports=(EndpointPort(name="https", port=6443, protocol="TCP"),)),))
    kubernetes = Service(
        metadata=ObjectMeta(name="kubernetes", namespace="default",
                            labels=frozen_map({"component": "apiserver", "provider": "kubernetes"})),
        spec=ServiceSpec(cluster_ip=str(kubernetes_service_ip(service_cidr)),
                         ports=(ServicePort(name="https", port=443, protocol="TCP", target_port=6443),)))
    # and its EndpointSlice, as the endpoint reconciler's EndpointsAdapter writes it (endpointSliceFromEndpoints):
    # named after the Service, labelled with its name only, each address a ready endpoint
    slice_ = EndpointSlice(
        metadata=ObjectMeta(name="kubernetes", namespace="default", labels=frozen_map({SERVICE_NAME_LABEL: "kubernetes"})),
        address_type="IPv4",
        endpoints=tuple(Endpoint(addresses=(apiserver_ip(a),), conditions=EndpointConditions(ready=True))
                        for a in apiservers),
        ports=(EndpointSlicePort(name="https", port=6443, protocol="TCP"),))
    # the scheduling/bootstrap-system-priority-classes post-start hook's classes come after the RBAC hook's policy
    return [*bootstrap_policy(builtin_controller_roles()), *system_priority_classes(),
            *(Namespace(metadata=ObjectMeta(name=n)) for n in BOOT_NAMESPACES), kubernetes, endpoints, slice_]


class Cluster:
    """See the module docstring."""

    def __init__(self, config: Optional[ClusterConfig] = None, *, extra: Iterable[Component] = ()) -> None:
        # The default is built per call, not at import: ClusterConfig() reads the component registry, which
        # imports every controller module, and one of those importing kmodel.cluster would then find it half-made.
        config = ClusterConfig() if config is None else config
        self.config = config

        self.store = Store(keep_compaction_tombstone=ETCD_KEEP_COMPACTION_TOMBSTONE in config.fixes)
        self.network = Network()
        self.etcd = EtcdServer(self.store, self.network)
        self.audit = AuditLog()
        self.service_ips = ServiceIPAllocator(config.service_cidr, random.Random(f"{config.seed}/serviceips"))
        extra = list(extra)
        # every built-in controller's service account is known by its token, whichever controllers run (as its
        # role is installed whichever run: the bootstrap policy)
        tokens = default_tokens(config.node_names(), controller_service_accounts())
        #: the registrations of the components the config names (kmodel.component.registry), in its order
        self.registrations: list[Registration] = [resolve(name) for name in config.components]
        own = [r for r in self.registrations if not r.builtin]
        # a controller of your own authenticates as its service account, with the role it declares: those the
        # config names by their registration, then the extra components by their attributes
        own_objects: list = []
        for r in own:
            if r.service_account:
                tokens[service_account_token(r.service_account)] = service_account_user(r.service_account)
        for account, rules in roles_by_account(own):
            own_objects += controller_role(account, rules)
        for component in extra:
            account = getattr(component, "service_account", "")
            if account and service_account_token(account) not in tokens:
                tokens[service_account_token(account)] = service_account_user(account)
                own_objects += controller_role(account, tuple(getattr(component, "rbac_rules", ())))
        # and the objects they need at boot (a CustomResourceDefinition, a first custom object), after the roles
        own_objects += [obj for r in own for obj in r.boot_objects]
        for name in config.users:  # users known by a token "<name>-token" (kubectl --as <name>)
            tokens.setdefault(user_token(name), user(name))
        pipeline_config = PipelineConfig(seed=config.seed, tokens=tokens, service_cidr=config.service_cidr)
        self.replicas: list[APIServerReplica] = []
        for name in config.apiserver_names():
            handle = self.etcd.handle_for(name)
            pipeline = Pipeline(handle, config=pipeline_config, audit=self.audit, service_ips=self.service_ips)
            self.replicas.append(APIServerReplica(name, pipeline, handle))
        self._boot(self.replicas[0].pipeline, own_objects)
        self.kubectl = Kubectl(config.apiserver_names())
        self.components: list[Component] = []
        #: the processes made of several components, by name: each kube-controller-manager's controllers, its shared
        #: informers (kmodel.controllers.shared_informers) and, unless --leader-elect=false, its leader election
        #: (kmodel.controllers.manager) are one process upstream, so they crash and restart together (a panic in one
        #: controller ends them all); a caller's extra components are not in one
        self.processes: dict[str, tuple[str, ...]] = {}
        self._build_components()
        #: the first kube-controller-manager's components
        self.controller_manager: tuple[str, ...] = self.processes.get(CONTROLLER_MANAGER, ())
        self.components.extend(extra)
        self.loop = Loop(self.network, components=[self.etcd, *self.replicas, self.kubectl, *self.components])
        if LEADERELECTION_RESET_ON_EXIT in config.fixes:
            self.loop.resets_on_exit = self._electing_endpoints()
        #: the nodes whose machines are in the cluster now (config's, plus added, minus removed ones)
        self.nodes: list[str] = config.node_names()
        #: nodes taken out by `remove_node` or lost by `lose_node`: their components stay down (the explorer
        #: never restarts them)
        self.removed_nodes: list[str] = []
        #: of removed_nodes, those lost by `lose_node`: their Nodes are left for the control plane to deal with
        self.lost_nodes: list[str] = []
        self.etcd.attach(self.loop)
        self.etcd.poke()
        wire(self)  # a variant's extra components, the nodes' data plane (kmodel.cluster.components)

    def _boot(self, pipeline: Pipeline, own_objects: Sequence[Any] = ()) -> None:
        """Create the boot objects, then `own_objects` (own components' roles and boot objects: typed objects, or
        manifest dicts, a custom object's after the CustomResourceDefinition that serves it)."""
        for i, obj in enumerate([*boot_objects(self.config.service_cidr, self.config.apiserver_names()), *own_objects]):
            res = self._boot_resource(obj)
            namespace, name = manifest_name(obj)
            request = Request(-(i + 1), "create", res.name, namespace if res.namespaced else "", body=obj,
                              token="admin-token")
            response = pipeline.handle(request, now=0, replica="bootstrap")
            if response.code >= 300:
                raise AssertionError(f"booting the cluster failed on {res.name}/{name}: {response}")

    def _boot_resource(self, obj: Any) -> Any:
        """The resource of a boot object: a built-in kind's, or the custom resource a stored CRD serves for a
        manifest's apiVersion and kind."""
        res = resource_of_manifest(obj)
        if res is not None:
            return res
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
        for crd in customresources.crds(self.store):
            if crd.spec.group == group and crd.spec.names.kind == obj.get("kind"):
                return customresources.resource_for(crd)
        raise ClusterError(f"no API resource for the boot object {obj.get('apiVersion')}/{obj.get('kind')}: a custom "
                           f"object comes after the CustomResourceDefinition that serves it")

    def _build_components(self) -> None:
        """The components `config.components` names, the controllers and the scheduler once per copy
        (`config.controller_managers`, `config.schedulers`), each kube-controller-manager as one process."""
        config = self.config
        apiservers = tuple(config.apiserver_names())
        managers = [ClusterContext(config, apiservers, k) for k in range(1, config.controller_managers + 1)]
        #: each kube-controller-manager's controllers, by its instance
        controllers: dict[int, list[str]] = {ctx.instance: [] for ctx in managers}
        for registration in self.registrations:
            if registration.process == KUBE_CONTROLLER_MANAGER:
                contexts = managers
            elif registration.process == KUBE_SCHEDULER:
                contexts = [ClusterContext(config, apiservers, k) for k in range(1, config.schedulers + 1)]
            else:
                contexts = managers[:1]
            for ctx in contexts:
                built = self._build(registration, ctx)
                self.components.extend(built)
                if registration.process == KUBE_CONTROLLER_MANAGER:
                    controllers[ctx.instance] += [c.name for c in built]
        for ctx in managers:
            names = set(controllers[ctx.instance])
            if not names:
                continue
            # the process's controllers in construction order: the order they register on the shared informers
            built = [c for c in self.components if c.name in names]
            informers = self._shared_informers(ctx, built)
            self.components.append(informers)
            members = sorted([*names, informers.name])
            process = ctx.named(CONTROLLER_MANAGER)
            if config.leader_elect:
                manager = ControllerManager(process, apiservers, host=ctx.host, members=members,
                                            fence_writes=LEADERELECTION_FENCE_WRITES in config.fixes,
                                            switches=ctx.switches)
                self._configure_client(manager)
                for component in self.components:
                    if component.name in members:
                        component.leadership = manager.leadership  # type: ignore[attr-defined]
                        component.client.write_guard = manager.leadership.guard  # type: ignore[attr-defined]
                self.components.append(manager)
                members = sorted([*members, process])
            self.processes[process] = tuple(members)

    def _electing_endpoints(self) -> frozenset[str]:
        """The endpoints of the processes that elect a leader: each kube-controller-manager's components and each
        kube-scheduler (those with a `leadership`)."""
        names = {name for members in self.processes.values() for name in members}
        names.update(c.name for c in self.components if getattr(c, "leadership", None) is not None)
        return frozenset(names)

    def _shared_informers(self, ctx: ClusterContext, controllers: Sequence[Component]) -> Component:
        """One kube-controller-manager's shared informers (kmodel.controllers.shared_informers), every controller
        of the process registered on them in construction order. The process's clients share one record of
        their writes' answers (`ApiClient.written_rvs`, an observer's record that restart-no-time-travel
        compares the shared informers' lists with: what the process wrote, whichever controller wrote it)."""
        informers = SharedInformers(ctx.named(SHARED_INFORMERS), ctx.apiservers, ctx.switches)
        self._configure_client(informers)
        for controller in controllers:
            informers.register(controller)
            controller.client.written_rvs = informers.client.written_rvs  # type: ignore[attr-defined]
        return informers

    def process_of(self, component: str) -> str:
        """The process a component runs in: its kube-controller-manager for the cluster's controllers, else itself."""
        for process, members in self.processes.items():
            if component in members:
                return process
        return component

    def instances(self, component: str) -> list[str]:
        """The names of every copy of a kube-controller-manager's controller or of the scheduler, given the first
        copy's name ("controller/nodeipam": "controller/nodeipam", "controller-2/nodeipam", ...), those that exist."""
        copies = self.config.schedulers if component == "scheduler" else self.config.controller_managers
        names = [instance_name(component, k) for k in range(1, copies + 1)]
        return [n for n in names if n in self.loop.components]

    def acting(self, component: str) -> Optional[str]:
        """The copy of `component` (named as its first copy) that acts now: the one whose process leads, or the
        component itself with --leader-elect=false; None while no copy leads (an observer's question: invariants ask
        it about the controllers whose memory they read)."""
        names = self.instances(component)
        if not self.config.leader_elect:
            return names[0] if names else None
        for name in names:
            member = self.loop.components[name]
            leadership = getattr(member, "leadership", None)
            elector = getattr(member, "elector", None)
            if (leadership is not None and leadership.leading and not getattr(member, "awaiting_leader", False)) \
                    or (elector is not None and elector.leading):
                return name
        return None

    def _build(self, registration: Registration, ctx: ClusterContext) -> list[Component]:
        """The components `registration`'s factory builds (with the cluster's switches, `ctx.switches`: the variant
        and the fixes, which their ApiClients read), each one's ApiClient given a random source for its reflectors'
        watch timeouts and backoff jitter seeded from the run's seed."""
        components = registration.factory(ctx)
        for component in components:
            self._configure_client(component)
        return components

    def _configure_client(self, component: Component) -> None:
        """Give a component's ApiClient its seeded random source (see `_build`)."""
        client = getattr(component, "client", None)
        if client is not None:
            client.rng = random.Random(f"{self.config.seed}/{client.owner}/rand")

    # -- time ----------------------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        return self.loop.now

    def run(self, until_ms: int, max_events: Optional[int] = None, busy_instant: Optional[int] = None) -> int:
        """Run fairly until logical time `until_ms`; returns the events applied. When the cluster falls quiet
        before then, the clock still moves on to `until_ms` (nothing happens in between). `busy_instant`: let
        time pass through an instant that busy (`Loop.run_fair`)."""
        applied = self.loop.run_fair(until_ms, max_events=max_events, busy_instant=busy_instant)
        if max_events is None or applied < max_events:
            advance = AdvanceTime(until_ms)
            if self.loop.is_enabled(advance):
                self.loop.step(advance)
                applied += 1
        return applied

    def run_for(self, ms: int, max_events: Optional[int] = None) -> int:
        return self.run(self.now + ms, max_events=max_events)

    # -- the user -------------------------------------------------------------------------------------------

    def submit(self, command: Command) -> None:
        self.kubectl.submit(command)
        self.loop.notify_work(self.kubectl.name)

    def apply(self, objects: Iterable[Any], *, token: str = "") -> None:
        """`kubectl apply -f` each object (typed, or a manifest dict), in order."""
        for obj in objects:
            self.submit(Apply(obj, token))

    # -- faults ---------------------------------------------------------------------------------------------

    def endpoints_of(self, target: str) -> list[str]:
        """A network endpoint by name, a process (`processes`: a kube-controller-manager) standing for its
        components, or a node name standing for all of that node's endpoints."""
        names = self.network.endpoints
        if target in self.processes:
            return list(self.processes[target])
        if target in names:
            return [target]
        of_node = sorted(e for e in names if e.endswith("/" + target))
        if of_node:
            return of_node
        raise ClusterError(f"unknown target {target!r}: give an endpoint ({', '.join(sorted(names))}) "
                           f"or a node name ({', '.join(self.config.node_names())})")

    def partition(self, target: str) -> None:
        self.loop.step(Partition(tuple(self.endpoints_of(target))))

    def heal(self, target: str) -> None:
        self.loop.step(Heal(tuple(self.endpoints_of(target))))

    def crash(self, target: str) -> None:
        for name in self.endpoints_of(target):
            if self.loop.is_up(name):
                self.loop.step(Crash(name))

    def restart(self, target: str) -> None:
        for name in self.endpoints_of(target):
            if not self.loop.is_up(name):
                self.loop.step(Restart(name))

    # -- machines ------------------------------------------------------------------------------------------

    def add_node(self, cpu: str = "") -> str:
        """A new machine joins: node-(N+1)'s kubelet and kube-proxy start now (the kubelet registers its Node
        through the API, as on a real join). `cpu`: the machine's CPUs (a Kubernetes quantity, "8"), if not
        the config's `node_cpu`: clusters often grow with machines of another size. Returns the node's name."""
        number = len(self.nodes) + len(self.removed_nodes) + 1
        node = f"node-{number}"
        config = attrs.evolve(self.config, nodes=number, node_cpu=cpu or self.config.node_cpu)
        ctx = ClusterContext(config, tuple(self.config.apiserver_names()))
        for name in ("kubelet", "proxy"):
            if name in self.config.components:
                for component in self._build(resolve(name), ctx):
                    if component.name.endswith("/" + node):
                        self.components.append(component)
                        self.loop.add_component(component)
        self.nodes.append(node)
        return node

    def remove_node(self, node: str) -> None:
        """A machine leaves for good, as an operator decommissions a node: the machine stops, then the operator
        runs `kubectl delete node` (queued here).

        Stopping the machine crashes its components (the explorer and `Settle` never restart them: a removed
        machine's kubelet comes back only if the operator rejoins the machine, which is `add_node`'s job) and
        loses what they had sent that no API server has received yet (a dropped head on each of their outgoing
        links, recorded in the loop's digest like any fault). A crash alone leaves such requests in flight, as a
        restarting process's last requests may still arrive; a machine that is switched off retransmits
        nothing, and the operator deletes the Node only once it is down, so none of its requests may arrive
        after the delete (one would, say, register the deleted Node again under a new podCIDR). What the API
        servers already received stays theirs to finish. (The loop takes the stop for a process crash, whose
        peers are told their connections reset and later messages refused; only API servers talk to a node's
        components, and they have nothing to do about either, as with a machine that is gone.)"""
        self._switch_off(node)
        self.submit(Delete("nodes", "", node))

    def lose_node(self, node: str) -> None:
        """A machine fails for good (its hardware dies, it is powered off) and no one deletes its Node: the
        control plane is left to notice, as it must in a real cluster. Its components stop and what they had
        sent that no API server has received is lost, as with `remove_node`, and nothing restarts them; the
        node lifecycle controller marks the Node unreachable and taints it NoExecute, taint eviction deletes
        its pods once their tolerations run out (300 s, DefaultTolerationSeconds), and their owners replace
        them elsewhere. The evicted pods stay Terminating, since no kubelet is left to confirm they stopped,
        as upstream (until the Node is deleted or tainted out-of-service)."""
        self._switch_off(node)
        self.lost_nodes.append(node)

    def _switch_off(self, node: str) -> None:
        if node not in self.nodes:
            raise ClusterError(f"no node {node!r} in the cluster ({', '.join(self.nodes)})")
        self.nodes.remove(node)
        self.removed_nodes.append(node)
        self.crash(node)
        machine = set(self.endpoints_of(node))
        for src, dst in self.network.nonempty_links():
            if src in machine:
                while self.network.has_in_flight(src, dst):
                    self.loop.step(DropHead(src, dst))

    # -- observing ------------------------------------------------------------------------------------------

    def objects(self, resource: str, namespace: str = "") -> list:
        """Every stored object of a resource (in key order), read straight from the store; a custom resource while
        a CustomResourceDefinition serves it (none before)."""
        res = RESOURCES.get(resource) or customresources.served(self.store, resource)
        if res is None:
            return []
        prefix = list_prefix(res, namespace)
        return [kv.value for kv in self.store.range(prefix, prefix_end(prefix)).kvs]

    def get(self, resource: str, namespace: str, name: str) -> Any:
        for obj in self.objects(resource, namespace):
            if obj.metadata.name == name:
                return obj
        return None
