"""One API server replica's request handling, as a pure function of the store and the request.

Theory of operation
-------------------
`Pipeline.handle(request, now=, replica=)` runs kube-apiserver's stages in order; the first to refuse
decides the answer, and nothing after it runs (a refused request leaves the store exactly as it was:
same revision, same history):

    1. resource lookup          404 NotFound (the server could not find the requested resource)
    2. authentication           401 Unauthorized                               (authentication.py)
    3. authorization            403 Forbidden                                  (authorization.py)
    4. decoding                 400 BadRequest                                 (validation.py)
    5. mutating admission       404 / 403 (NamespaceLifecycle, NodeRestriction), DefaultTolerationSeconds
    6. registry preparation     metadata defaults, ClusterIP allocation (422)  (strategy.py, clusterip.py)
    7. schema validation        422 Invalid                                    (validation.py)
    8. validating admission     403 Forbidden (PodSecurity)                    (admission/)
    9. store write              409 AlreadyExists / Conflict, 201 / 200        (registry.py)

Reads (get, list) are consistent: they range over the store at its current revision. Updates are
read-modify-write loops (GuaranteedUpdate): read the current version without a store request, build the new
object, compare-and-swap on mod_revision, and on a lost race read again (bounded). `watch` is not served here:
the watch cache serves it, and asks `admit_read` (authentication + authorization only) first.

Custom resources (customresources.py): a resource the built-in table lacks is looked up among the stored,
Established CRDs; its bodies are decoded, defaulted and validated against the CRD's schema, its objects go
through the same stages and registry. A CRD's create or change is followed by the naming and establishing
controllers' status write (crd_status.py); its delete by the finalizing controller's work
(customresource_cleanup.py).

A write whose request names a field manager records it in managedFields; a patch of type "apply" is a
server-side apply, which creates the object when it is absent (apply/). A dryRun write runs every stage and
answers as if written, storing nothing (dryrun.py).

Every handled request goes on the audit log (`self.audit`, shareable between replicas).
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import attrs

from kmodel.apiserver import clusterip, customresources, deletion, errors, serviceaccount_tokens, strategy, validation
from kmodel.apiserver import scale
from kmodel.apiserver.apply import writes as field_managers
from kmodel.apiserver.dryrun import DryRunRegistry
from kmodel.apiserver.customresource_cleanup import finalize_crds, first_crd_delete, names_freed
from kmodel.apiserver.admission import CREATE, DELETE, UPDATE, AdmissionAttributes, run_mutating, run_validating
from kmodel.apiserver.audit import ALLOW, FORBID, AuditLog
from kmodel.apiserver import tokenrequest
from kmodel.apiserver.authentication import TokenAuthenticator, UserInfo, service_account_user
from kmodel.apiserver.authorization import Attributes, Authorizer
from kmodel.apiserver.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from kmodel.apiserver.registry import Conflict, Registry
from kmodel.apiserver.resources import RESOURCES, Resource, resource as served_resource
from kmodel.apiserver.selectors import SelectorError, parse_field_selector, parse_label_selector
from kmodel.apiserver.storeview import backing_store
from kmodel.store import StoreError
from kmodel.apiserver.wire import PatchBody, Preconditions, Request, Response, Status
from kmodel.ipam.serviceip import DEFAULT_SERVICE_CIDR, ServiceIPAllocator
from kmodel.objects import decode, dump, validate
from kmodel.objects.authentication import SelfSubjectReviewStatus, UserInfo as AuthenticatedUser
from kmodel.objects.core import PodCondition
from kmodel.store import Store

from kmodel.apiserver.fastevolve import evolve as _evolve
from kmodel.objects.fastevolve import constructor
from kmodel.apiserver.crd_status import accept_names, stored_versions
from kmodel.objects.field_errors import GoValue, invalid
_response = constructor(Response)  # Response(id, code, body), built as its __init__ would (see fastevolve)
MAX_UPDATE_ATTEMPTS = 8  # GuaranteedUpdate retries; also upstream's generateName create attempts
# resources whose update creates a missing object (AllowCreateOnUpdate in their strategies)
CREATE_ON_UPDATE = frozenset({"events", "endpoints", "roles", "clusterroles", "rolebindings", "clusterrolebindings"})
_NOT_FOUND_RESOURCE = "the server could not find the requested resource"
#: a server-side apply of a Scale is not modelled (docs/differences.md)
_SCALE_APPLY = ("a server-side apply of the scale subresource is not served by the model: patch it with a JSON "
                "merge patch, a JSON patch or (built-in kinds) a strategic merge patch")
_UNKNOWN_PATCH_FORMAT = ("the body of the request was in an unknown format - accepted media types include: "
                         "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


@attrs.frozen
class PipelineConfig:
    """seed: the random source of generated names, uids and ClusterIPs (per replica: seed + replica name)."""

    seed: int = 0
    tokens: Optional[Mapping[str, UserInfo]] = None
    service_cidr: str = DEFAULT_SERVICE_CIDR
    node_authorizer: bool = True


class Pipeline:
    """The request pipeline of an API server replica over `store`. See the module docstring."""

    def __init__(self, store: Store, *, config: PipelineConfig = PipelineConfig(), audit: AuditLog | None = None,
                 service_ips: ServiceIPAllocator | None = None) -> None:
        self.store = store
        self._backing = backing_store(store)  # for the revision on each audit record, read without the handle
        self.config = config
        self.audit = audit if audit is not None else AuditLog()
        self._signing_key = serviceaccount_tokens.signing_key(config.seed)
        self.authenticator = TokenAuthenticator(config.tokens, bound_tokens=self._bound_token_user)
        self.authorizer = Authorizer(store, node_authorizer=config.node_authorizer)
        self.registry = Registry(store)
        self._dry_registry = DryRunRegistry(self.registry)
        self.service_ips = service_ips if service_ips is not None else ServiceIPAllocator(
            config.service_cidr, random.Random(f"{config.seed}/serviceips"))
        self._rngs: dict[str, random.Random] = {}
        self._now = 0  # the time of the request being handled
        self._finalizing = False  # the CRD finalizer is deleting custom objects (customresource_cleanup.py)
        self._verbs: dict[str, Callable[..., tuple[int, Any]]] = {
            "get": self._get, "list": self._list, "create": self._create, "update": self._update,
            "patch": self._patch, "delete": self._delete,
        }

    # --- entry points ----------------------------------------------------------------------------------

    def handle(self, request: Request, *, now: int, replica: str = "apiserver-0") -> Response:
        """Handle one request (every verb but watch) and record it on the audit log."""
        user_name = ""
        verb = request.verb
        self._now = now
        decision = ""  # authorization's verdict, as upstream's audit annotation authorization.k8s.io/decision
        try:
            res = self._resource(request)
            user = self.authenticator.authenticate(request.token)
            user_name = user.name  # a request refused by authorization is audited with its user, as upstream
            decision = FORBID
            self._authorize(request, res, user)
            decision = ALLOW
            handler = self._verbs.get(verb)
            if handler is None:
                raise errors.method_not_allowed(f"{verb} is not supported by this handler")
            code, body = handler(request, res, user, now, replica)
        except errors.APIError as e:
            code, body = e.status.code, e.status
        except StoreError:
            # etcd could not be reached: the replica answers 500 (store_error_status); audited as that answer
            self._audit(now, replica, user_name, request, 500, decision)
            raise
        self._audit(now, replica, user_name, request, code, decision)
        return _response(request.id, code, body)

    def _audit(self, now: int, replica: str, user_name: str, request: Request, code: int, decision: str) -> None:
        # the audit record, as the plain tuple of its fields (see AuditRecords)
        self.audit.records.append_fields((now, replica, user_name, request.verb, request.resource,
                                           request.namespace, request.name, request.subresource, code,
                                           self._backing.revision, decision))

    def admit_read(self, request: Request, now: int) -> Union[UserInfo, Response]:
        """Authentication and authorization only (for the watch cache): the user, or the error Response."""
        self._now = now
        try:
            return self._admit(request)[1]
        except errors.APIError as e:
            return Response(request.id, e.status.code, e.status)

    def _admit(self, request: Request) -> tuple[Resource, UserInfo]:
        res = self._resource(request)
        user = self.authenticator.authenticate(request.token)
        self._authorize(request, res, user)
        return res, user

    def _resource(self, request: Request) -> Resource:
        res = served_resource(request.resource)
        if res is None:
            res = customresources.served(self.store, request.resource)
        subresource = request.subresource
        if res is None or (subresource and subresource not in res.subresources):
            raise errors.APIError(Status(404, "NotFound", _NOT_FOUND_RESOURCE))
        return res

    def _authorize(self, request: Request, res: Resource, user: UserInfo) -> None:
        verb, subresource = request.verb, request.subresource
        name = request.name if (verb != "create" or subresource) else ""
        self.authorizer.allows(user, verb, res.name, request.namespace, name, subresource, res.group)

    def _rng(self, replica: str) -> random.Random:
        rng = self._rngs.get(replica)
        if rng is None:
            rng = self._rngs[replica] = random.Random(f"{self.config.seed}/{replica}")
        return rng

    # --- reads -----------------------------------------------------------------------------------------

    def _get(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        obj = self.registry.get(res, request.namespace, request.name)
        if res.crd is not None:
            obj = customresources.as_read(res, obj)
        if request.subresource == "scale":
            return 200, scale.scale_of(res, obj)
        return 200, obj

    def _list(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        try:
            labels = parse_label_selector(request.label_selector)
            fields = parse_field_selector(request.field_selector, res.name)
        except SelectorError as e:
            raise errors.bad_request(str(e)) from None
        listed = self.registry.list(res, request.namespace, labels, fields)
        if res.crd is not None:
            listed = attrs.evolve(listed, items=tuple(customresources.as_read(res, o) for o in listed.items))
        return 200, listed

    # --- create ----------------------------------------------------------------------------------------

    def _create(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        if request.subresource == "binding" or res.name == "bindings":
            return self._bind(request, user, now)
        if request.subresource == "token":
            return self._token_request(request, user, now, replica)
        if res.name == "selfsubjectaccessreviews":
            return self._access_review(request, res, user)
        if res.name == "selfsubjectreviews":
            return self._self_review(request, res, user)
        if request.subresource:
            raise errors.method_not_allowed(f"create is not supported on {res.name}/{request.subresource}")
        if res.crd is not None:
            customresources.refuse_create_while_terminating(res)
        field_managers.check_options(request, apply=False)
        obj = validation.decode_body(res, request.body, request.field_validation)
        meta = obj.metadata
        namespace = ""
        if res.namespaced:
            namespace = request.namespace or meta.namespace
            if meta.namespace and request.namespace and meta.namespace != request.namespace:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
            if meta.namespace != namespace:
                obj = _evolve(obj, metadata=_evolve(meta, namespace=namespace))
        a = AdmissionAttributes(CREATE, res, "", namespace, obj.metadata.name, obj, None, user, now, self.store)
        obj = run_mutating(a)
        taken: Sequence[str] = ()  # the ClusterIPs this create allocated (services only)
        if res.name == "services":
            obj, taken = clusterip.allocate_for_create(res, obj, self.service_ips)
        try:
            created = self._create_prepared(res, obj, user, now, replica, a, request)
        except BaseException:
            for ip in taken:
                self.service_ips.release(ip)
            raise
        if request.dry_run:
            for ip in taken:
                self.service_ips.release(ip)  # a dry run allocates nothing
            return 201, created
        if res.name == "customresourcedefinitions":
            self._crd_controllers(created.metadata.name, now)
        return 201, created

    def _create_prepared(self, res: Resource, obj: Any, user: UserInfo, now: int, replica: str,
                         a: Optional[AdmissionAttributes] = None, request: Optional[Request] = None) -> Any:
        """`a`: the mutating stage's attributes, reused (re-aimed at the prepared object) for validation.
        `request`: the create's (its field manager and dry run), if any."""
        rng = self._rngs.get(replica) or self._rng(replica)
        meta = obj.metadata
        registry = self._registry_for(request)
        for attempt in range(MAX_UPDATE_ATTEMPTS):
            name = meta.name or (strategy.generated_name(meta.generate_name, rng) if meta.generate_name else "")
            ready = strategy.prepare_for_create(res, obj, now=now, rng=rng,
                                                revision=self._backing.revision + 1, name=name)
            if request is not None:
                ready = field_managers.track(res, request, None, ready, meta.managed_fields, now)
            validation.check_create(res, ready)
            if a is None:
                a = AdmissionAttributes(CREATE, res, "", meta.namespace, name, ready, None, user, now, self.store)
            else:
                a.namespace, a.name, a.obj = meta.namespace, name, ready
            run_validating(a)
            if meta.resource_version:
                raise errors.internal_error("resourceVersion should not be set on objects to be created")
            try:
                return registry.create(res, ready)
            except errors.APIError as e:
                # a generated name that collides is drawn again (upstream: RetryGenerateName)
                if meta.name or e.status.reason != "AlreadyExists" or attempt == MAX_UPDATE_ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _registry_for(self, request: Optional[Request]) -> Any:
        """The registry a request writes through: the store's, or for a dry run one that writes nothing."""
        return self._dry_registry if request is not None and request.dry_run else self.registry

    # --- update and patch ------------------------------------------------------------------------------

    def _update(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        if request.subresource == "scale":
            return self._update_scale(request, res, user, now, replica)
        if request.subresource not in ("", "status") and not _finalize(res, request.subresource):
            raise errors.method_not_allowed(f"update is not supported on {res.name}/{request.subresource}")
        if request.subresource == "status" and isinstance(request.body, res.cls) and res.crd is None:
            obj = request.body  # only its status is kept: defaulting the rest would be thrown away
        else:
            obj = validation.decode_body(res, request.body, request.field_validation)
        meta = obj.metadata
        if meta.name != request.name:
            raise errors.bad_request(
                f"the name of the object ({meta.name}) does not match the name on the URL ({request.name})")
        if res.namespaced:
            if meta.namespace and meta.namespace != request.namespace:
                raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
            if not meta.namespace:
                obj = _evolve(obj, metadata=_evolve(meta, namespace=request.namespace))
        field_managers.check_options(request, apply=False)
        rv = meta.resource_version or request.resource_version
        answer = self._guaranteed_update(request, res, user, now, replica, lambda old: obj, rv, allow_create=True)
        if res.name == "customresourcedefinitions" and not request.subresource and not request.dry_run:
            self._crd_controllers(request.name, now)
        return answer

    def _update_scale(self, request: Request, res: Resource, user: UserInfo, now: int,
                      replica: str) -> tuple[int, Any]:
        """PUT <resource>/<name>/scale: the Scale's replicas written to the parent (scale.py)."""
        body = request.body.to_json() if hasattr(request.body, "to_json") else request.body
        customresources.scale_request(body)  # a body that is no valid Scale is refused before the parent is read
        return self._write_scale(request, res, user, now, replica, lambda old: body)

    def _patch_scale(self, request: Request, res: Resource, user: UserInfo, now: int,
                     replica: str) -> tuple[int, Any]:
        """PATCH <resource>/<name>/scale: the patch applied to the current Scale, whose replicas then move to the
        parent (scale.py); the patched Scale's resourceVersion is the write's precondition."""
        patch = request.body
        if isinstance(patch, PatchBody) and patch.type == "apply":
            raise errors.APIError(Status(415, "UnsupportedMediaType", _SCALE_APPLY))
        return self._write_scale(request, res, user, now, replica,
                                 lambda old: scale.patched_scale(res, _read_form(res, old), patch))

    def _write_scale(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str,
                     scale_from: Callable[[Any], dict]) -> tuple[int, Any]:
        """The parent's guaranteed update by the Scale `scale_from(stored parent)` (its resourceVersion, when set,
        a precondition), answered with the new Scale."""
        main = attrs.evolve(request, subresource="")

        def new_from(old: Any) -> Any:
            body = scale_from(old)
            wanted = scale.precondition(body)
            if wanted and wanted != old.metadata.resource_version:
                raise errors.conflict(res.group, res.name, request.name, errors.OPTIMISTIC_LOCK_MESSAGE)
            return scale.scaled(res, old, body)

        code, obj = self._guaranteed_update(main, res, user, now, replica, new_from, "", allow_create=False,
                                            precondition_only=True)
        return code, scale.scale_of(res, _read_form(res, obj))

    def _patch(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        if request.subresource == "scale":
            return self._patch_scale(request, res, user, now, replica)
        if request.subresource not in ("", "status"):
            raise errors.method_not_allowed(f"patch is not supported on {res.name}/{request.subresource}")
        patch, apply = request.body, merge_patch
        if isinstance(patch, PatchBody) and patch.type == "apply":
            return self._apply(request, res, user, now, replica)
        field_managers.check_options(request, apply=False)
        if isinstance(patch, PatchBody):  # a JSON patch or a strategic merge patch (the wire's Content-Type)
            if patch.type == "strategic" and res.crd is not None:
                # custom objects have no merge keys: upstream refuses the media type for them
                raise errors.APIError(Status(415, "UnsupportedMediaType", _UNKNOWN_PATCH_FORMAT))
            patch, apply = patch.patch, (json_patch if patch.type == "json" else strategic_merge_patch)
        elif not isinstance(patch, dict):
            raise errors.bad_request(_UNKNOWN_PATCH_FORMAT)

        def patched(old: Any) -> Any:
            try:
                if res.wire is None:
                    applied = apply(dump(old), patch)
                else:  # another group version of the stored kind: patched in its own field names
                    applied = res.wire.to_core(apply(res.wire.from_core(dump(old)), patch))
            except PatchError as e:
                raise errors.APIError(Status(e.code, "Invalid" if e.code == 422 else "BadRequest", str(e))) from None
            return _decode_patched(res, request, applied, old.metadata.name, old.metadata.namespace)

        # a patch carries a precondition only if it sets metadata.resourceVersion itself
        rv = str(((patch.get("metadata") or {}) if isinstance(patch, dict) else {}).get("resourceVersion") or "")
        answer = self._guaranteed_update(request, res, user, now, replica, patched, rv, allow_create=False)
        if res.name == "customresourcedefinitions" and not request.subresource and not request.dry_run:
            self._crd_controllers(request.name, now)
        return answer

    def _apply(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        """A server-side apply (apply/): the configuration merged over the object, or the object it creates."""
        config = request.body.patch
        if not isinstance(config, dict):
            raise errors.bad_request("error decoding YAML: the applied configuration must be an object")
        field_managers.check_options(request, apply=True)

        def applied(old: Any) -> Any:
            merged, entries = field_managers.applied(res, request, old, config, now)
            metadata = merged.setdefault("metadata", {})
            if old is None:  # the apply creates the object: its name and namespace are the URL's
                metadata.setdefault("name", request.name)
                if res.namespaced:
                    metadata.setdefault("namespace", request.namespace)
            obj = _decode_patched(res, request, merged, request.name, request.namespace if res.namespaced else "")
            return field_managers.with_entries(obj, entries)

        rv = str((config.get("metadata") or {}).get("resourceVersion") or "")
        answer = self._guaranteed_update(request, res, user, now, replica, applied, rv, allow_create=True,
                                         create_missing=True)
        if res.name == "customresourcedefinitions" and not request.subresource and not request.dry_run:
            self._crd_controllers(request.name, now)
        return answer

    def _guaranteed_update(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str,
                           new_from: Callable[[Any], Any], rv: str, *, allow_create: bool,
                           precondition_only: bool = False, create_missing: bool = False) -> tuple[int, Any]:
        """precondition_only: `rv` is only a precondition (a scale update: the object itself is the stored one).
        create_missing: a missing object is created from new_from(None) (an apply) whatever the resource."""
        registry = self._registry_for(request)
        subresource = request.subresource
        for _ in range(MAX_UPDATE_ATTEMPTS):
            kv = registry.read(res, request.namespace, request.name)
            if kv is None:
                if allow_create and not subresource and (create_missing or res.name in CREATE_ON_UPDATE) and not rv:
                    obj = new_from(None)
                    a = AdmissionAttributes(CREATE, res, "", request.namespace, request.name, obj, None, user, now,
                                            self.store)
                    return 201, self._create_prepared(res, run_mutating(a), user, now, replica, request=request)
                raise errors.not_found(res.group, res.name, request.name)
            old = kv.value
            if rv and rv != str(kv.mod_revision):
                raise errors.conflict(res.group, res.name, request.name, errors.OPTIMISTIC_LOCK_MESSAGE)
            if not rv and not res.allow_unconditional_update and not precondition_only \
                    and not (res.crd is not None and request.verb == "patch"):
                raise errors.invalid(res.group_kind, res.group, res.kind, request.name, [
                    _rv_required()])
            new = new_from(old)
            sent = new.metadata.managed_fields  # before the strategy resets metadata (a status update)
            if res.name == "services" and not subresource:
                new = clusterip.keep_allocated(new, old)
            a = AdmissionAttributes(UPDATE, res, subresource, request.namespace, request.name, new, old, user, now,
                                    self.store)
            new = run_mutating(a)
            new = strategy.prepare_for_update(res, new, old, subresource=subresource,
                                              revision=self._backing.revision + 1)  # registry.next_revision()
            if res.name == "services" and not subresource:
                new = clusterip.drop_type_dependent(new, old)
            new = field_managers.track(res, request, old, new, sent, now)
            if res.crd is not None:
                customresources.check(res, new, old)  # a custom object's status is validated too
            elif subresource != "status":
                # a status update keeps the stored (already valid) spec and metadata: only status moves, and
                # the model does not validate status fields (upstream's ValidatePodStatusUpdate & co. do)
                validation.check_update(res, new, old)
            a.obj = new
            run_validating(a)
            if strategy.same_but_version(new, old):
                return 200, old  # nothing changed: no write, the revision stays
            try:
                if deletion.deleted_by_update(res.name, new):
                    registry.remove(kv)  # the last finalizer is gone: the deletion completes
                    if not request.dry_run:
                        self._after_delete(res, old)
                    return 200, new
                if res.name == "services" and not subresource:
                    return 200, self._replace_service(res, registry, kv, new, old, request.dry_run)
                return 200, registry.replace(res, kv, new)
            except Conflict:
                continue
        raise errors.conflict(res.group, res.name, request.name, errors.OPTIMISTIC_LOCK_MESSAGE)

    # --- delete ----------------------------------------------------------------------------------------

    def _delete(self, request: Request, res: Resource, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        """The generic registry's Delete with graceful deletion and finalizers (see deletion.py)."""
        policy = request.propagation_policy
        deletion.check_delete_options(policy)
        registry = self._registry_for(request)
        dry = request.dry_run
        for _ in range(MAX_UPDATE_ATTEMPTS):
            kv = registry.read(res, request.namespace, request.name)
            if kv is None:
                raise errors.not_found(res.group, res.name, request.name)
            old = kv.value
            if isinstance(request.body, Preconditions):
                _check_preconditions(request.body, res, old)
            a = AdmissionAttributes(DELETE, res, "", request.namespace, request.name, None, old, user, now, self.store)
            run_mutating(a)
            run_validating(a)
            if res.name == "customresourcedefinitions" and old.metadata.deletion_timestamp is None:
                try:
                    first = registry.replace(res, kv, self._next_version(first_crd_delete(old, now)))
                except Conflict:
                    continue
                if not dry:
                    finalize_crds(self, now)
                return 200, first
            try:
                if res.name == "namespaces" and old.metadata.deletion_timestamp is None:
                    new = deletion.namespace_first_delete(old, policy, now)
                    return 200, registry.replace(res, kv, self._next_version(new))
                if res.name == "namespaces" and old.spec.finalizers:
                    return 200, old  # the namespace controller finalizes it once it holds nothing
                verdict, obj = deletion.before_delete(res.name, old, request.grace_period_seconds, now)
                if verdict == "pending":
                    return 200, old  # already terminating, at least as soon: nothing to do
                obj = deletion.with_finalizers(obj, deletion.gc_finalizers(obj.metadata.finalizers, policy))
                if verdict == "graceful":
                    return 200, registry.replace(res, kv, self._next_version(obj))
                if obj.metadata.finalizers:
                    obj = deletion.mark_as_deleting(res.name, obj, now)
                    if strategy.same_but_version(obj, old):
                        return 200, old
                    return 200, registry.replace(res, kv, self._next_version(obj))
                registry.remove(kv)
            except Conflict:
                continue
            if not dry:
                self._after_delete(res, old)
            return 200, old
        raise errors.conflict(res.group, res.name, request.name, errors.OPTIMISTIC_LOCK_MESSAGE)

    def _crd_controllers(self, name: str, now: int) -> None:
        """The naming and establishing controllers' write after a CRD is created or changed (crd_status.py),
        with status.storedVersions gaining a new storage version (the CRD strategy's PrepareForUpdate)."""
        crds = self.registry
        kv = crds.read(RESOURCES["customresourcedefinitions"], "", name)
        if kv is None:
            return
        new = stored_versions(accept_names(kv.value, customresources.crds(self.store), now))
        if new is not kv.value:
            try:
                crds.replace(RESOURCES["customresourcedefinitions"], kv, self._next_version(new))
            except Conflict:
                pass  # cannot happen: one request runs at a time

    def _next_version(self, obj: Any) -> Any:
        """`obj` with the resourceVersion its write will get."""
        return _evolve(obj, metadata=_evolve(obj.metadata, resource_version=str(self.registry.next_revision())))

    def _replace_service(self, res: Resource, registry: Any, kv: Any, new: Any, old: Any, dry_run: bool) -> Any:
        """Store a Service's update with its ClusterIPs as alloc.go's allocateUpdate keeps them: a Service switched
        from ExternalName is given a ClusterIP first (500 `range is full` with none left; given back if the
        write fails), one switched to ExternalName releases its old ones once the write is stored."""
        taken: Sequence[str] = ()
        if clusterip.switched_from_external_name(new, old):
            new, taken = clusterip.allocate_for_create(res, new, self.service_ips)
        try:
            stored = registry.replace(res, kv, new)
        except BaseException:
            for ip in taken:
                self.service_ips.release(ip)
            raise
        if dry_run:
            for ip in taken:
                self.service_ips.release(ip)  # a dry run allocates nothing
        elif clusterip.switched_to_external_name(new, old):
            clusterip.release(old, self.service_ips)
        return stored

    def _after_delete(self, res: Resource, old: Any) -> None:
        if res.name == "services":
            clusterip.release(old, self.service_ips)
        elif res.name == "customresourcedefinitions":
            names_freed(self, self._now)  # its names are free: the naming controller looks again
        elif res.crd is not None and not self._finalizing:
            finalize_crds(self, self._now)

    # --- serviceaccounts/token ------------------------------------------------------------------------

    def _token_request(self, request: Request, user: UserInfo, now: int, replica: str) -> tuple[int, Any]:
        """TokenREST.Create: a bound token for an existing service account (serviceaccount_tokens.py), answered
        as the TokenRequest with its spec defaulted and its status filled; nothing is stored."""
        namespace, name = request.namespace, request.name
        token_request = tokenrequest.decode_request(request.body, name, namespace)
        sa = self.registry.get(RESOURCES["serviceaccounts"], namespace, name)
        token_request = tokenrequest.prepared(token_request, name, namespace, now)
        spec = token_request.spec
        if spec.bound_object_ref is not None:
            raise errors.bad_request("kmodel does not bind tokens to objects: send a TokenRequest without "
                                     "spec.boundObjectRef")
        rng = self._rngs.get(replica) or self._rng(replica)
        token = serviceaccount_tokens.issue(
            self._signing_key, namespace=namespace, name=name, uid=sa.metadata.uid, audiences=spec.audiences,
            expiration_seconds=spec.expiration_seconds, now=now, rng=rng)
        return 201, tokenrequest.answer(token_request, token, now)

    # --- selfsubjectaccessreviews ---------------------------------------------------------------------

    def _access_review(self, request: Request, res: Resource, user: UserInfo) -> tuple[int, Any]:
        """SelfSubjectAccessReview: whether the requester may do what the spec's resourceAttributes say, as
        authorization would decide that request (status.allowed; denied stays false, as RBAC never denies).
        nonResourceAttributes are answered not allowed: the model serves no non-resource URLs to authorize."""
        review = validation.decode_body(res, request.body, request.field_validation)
        attributes = review.spec.resource_attributes
        if attributes is None and review.spec.non_resource_attributes is None:
            raise errors.invalid(res.group_kind, res.group, res.kind, "", [
                invalid("spec.resourceAttributes", GoValue("null"),
                        "exactly one of nonResourceAttributes or resourceAttributes must be specified")])
        allowed = False
        if attributes is not None:
            try:
                self.authorizer.allows(user, attributes.verb, attributes.resource, attributes.namespace,
                                       attributes.name, attributes.subresource, attributes.group)
                allowed = True
            except errors.APIError:
                allowed = False
        return 201, _evolve(review, status=_evolve(review.status, allowed=allowed))

    def _self_review(self, request: Request, res: Resource, user: UserInfo) -> tuple[int, Any]:
        """SelfSubjectReview (pkg/registry/authentication/selfsubjectreview): the requester as authentication saw
        it, in status.userInfo; the body's own status is ignored."""
        review = validation.decode_body(res, request.body, request.field_validation)
        info = AuthenticatedUser(username=user.name, groups=tuple(user.groups))
        return 201, _evolve(review, status=SelfSubjectReviewStatus(user_info=info))

    def _bound_token_user(self, token: str) -> Optional[UserInfo]:
        """The service account a bound token authenticates now, or None (serviceaccount_tokens.verify)."""
        if not serviceaccount_tokens.looks_like_jwt(token):
            return None
        accounts = RESOURCES["serviceaccounts"]

        def stored(namespace: str, name: str) -> Any:
            kv = self.registry.read(accounts, namespace, name)
            return kv.value if kv is not None else None

        found = serviceaccount_tokens.verify(self._signing_key, token, self._now, stored)
        return service_account_user(found[1], found[0]) if found is not None else None

    # --- pods/binding ----------------------------------------------------------------------------------

    def _bind(self, request: Request, user: UserInfo, now: int) -> tuple[int, Any]:
        pods, bindings = RESOURCES["pods"], RESOURCES["bindings"]
        binding = validation.decode_body(bindings, request.body, request.field_validation)
        name = request.name or binding.metadata.name
        if request.name and binding.metadata.name != request.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        found = validate(binding)
        if found:
            raise errors.invalid(bindings.group_kind, "", bindings.kind, name, found)
        node = binding.target.name
        registry = self.registry
        for _ in range(MAX_UPDATE_ATTEMPTS):
            kv = registry.read(pods, request.namespace, name)
            if kv is None:
                raise errors.not_found("", "pods", name)
            pod = kv.value
            if pod.metadata.deletion_timestamp is not None:
                raise errors.conflict("", "pods/binding", name,
                                      f"pod {name} is being deleted, cannot be assigned to a host")
            if pod.spec.node_name:
                raise errors.conflict("", "pods/binding", name,
                                      f'pod {name} is already assigned to node "{pod.spec.node_name}"')
            meta = pod.metadata
            if binding.metadata.annotations:
                meta = _evolve(meta, annotations=type(meta.annotations)({**meta.annotations,
                                                                          **binding.metadata.annotations}))
            meta = _evolve(meta, resource_version=str(registry.next_revision()))
            bound = _evolve(pod, metadata=meta, spec=_evolve(pod.spec, node_name=node),
                            status=_evolve(pod.status, conditions=_scheduled(pod.status.conditions, now)))
            try:
                registry.replace(pods, kv, bound)
            except Conflict:
                continue
            return 201, Status(201, "", "")
        raise errors.conflict("", "pods/binding", name, errors.OPTIMISTIC_LOCK_MESSAGE)


def _read_form(res: Resource, obj: Any) -> Any:
    """A stored object as a read answers it (a custom object pruned and defaulted by the current schema)."""
    return customresources.as_read(res, obj) if res.crd is not None else obj


def _decode_patched(res: Resource, request: Request, data: dict, name: str, namespace: str) -> Any:
    """The object a patch or an apply made (its JSON), decoded as the resource's kind; 400 when the patch changed
    the kind, the name or the namespace."""
    if res.crd is not None:
        return customresources.decode(res, data, request.field_validation)
    obj = decode(data, strict=request.field_validation == "Strict")
    if not isinstance(obj, res.cls):
        status = Status(obj.code, obj.reason, obj.message) if hasattr(obj, "reason") else None
        raise errors.APIError(status or Status(400, "BadRequest", "patch changed the kind"))
    if obj.metadata.name != name or obj.metadata.namespace != namespace:
        raise errors.bad_request("metadata.name and metadata.namespace may not be changed by a patch")
    return obj


def _check_preconditions(pre: Preconditions, res: Resource, obj: Any) -> None:
    """DeleteOptions.preconditions (metav1.Preconditions.Check): 409 Conflict when the object is not the one meant."""
    meta = obj.metadata
    for what, wanted, actual in (("UID", pre.uid, meta.uid), ("ResourceVersion", pre.resource_version,
                                                               meta.resource_version)):
        if wanted and wanted != actual:
            raise errors.conflict(res.group, res.name, meta.name,
                                  f"Precondition failed: {what} in precondition: {wanted}, {what} in object meta: "
                                  f"{actual}")


def _finalize(res: Resource, subresource: str) -> bool:
    """namespaces/finalize: the update through which the namespace controller removes its finalizer."""
    return subresource == "finalize" and res.name == "namespaces"


def _scheduled(conditions: tuple, now: int) -> tuple:
    """podutil.UpdatePodCondition with PodScheduled=True."""
    for i, c in enumerate(conditions):
        if c.type == "PodScheduled":
            if c.status == "True":
                return conditions
            return conditions[:i] + (PodCondition(type="PodScheduled", status="True", last_transition_time=now),) \
                + conditions[i + 1:]
    return conditions + (PodCondition(type="PodScheduled", status="True", last_transition_time=now),)


def _rv_required() -> Any:
    return invalid("metadata.resourceVersion", GoValue("0x0"), "must be specified for an update")
