"""The `kmodel simulate` subcommand: options, exit codes, output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kmodel.cluster.leader_elect_option import add_leader_elect_option
from kmodel.component.command import add_component_option, components_from
from kmodel.errors import KmodelUsageError
from kmodel.fixes.command import add_fix_option, fixes_from
from kmodel.simulate.inputs import FAULT_ACTIONS, FAULT_HELP, InputError, parse_apply, parse_fault, read_manifests
from kmodel.simulate.render import rejections, render
from kmodel.simulate.run import simulate
from kmodel.variants import variant as known_variant


def check_variant(name: str) -> None:
    try:
        known_variant(name)
    except ValueError as exc:
        raise InputError(str(exc)) from None

HELP = "apply manifests to a fresh model cluster, run it, and show what a user would see"
EPILOG = """exit codes: 0 every request was accepted; 1 some were rejected or named a kind the model does not
serve (the run goes on with the rest, as kubectl does); 2 input that cannot be used. Times are seconds of
logical time.

-f is one kubectl apply at time 0; each --apply FILE_OR_DIR@SECONDS is another at that time. kubectl maps
every object of an invocation before it applies any, so an object of a custom kind needs its CRD applied in
an earlier invocation: -f examples/crd.yaml --apply examples/objects/database.yaml@5.

A fault is ACTION:TARGET@SECONDS, TARGET a network endpoint (etcd, apiserver-0, scheduler,
controller/deployment, kubelet/node-1, ...), a process (kube-controller-manager, kube-controller-manager-2: all
its controllers) or a node name (all its endpoints). ACTION is one of:
""" + "\n".join(f"  {action:<10} {FAULT_HELP[action]}" for action in FAULT_ACTIONS) + """

The output shows the control plane (etcd and each API server: down, cut off), then what kubectl get would
show: nodes, pods, deployments, replicasets, services, kube-proxy's rules, custom objects and events."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("simulate", help=HELP, description=HELP, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-f", "--filename", dest="files", action="append", required=True, metavar="FILE_OR_DIR",
                   help="a manifest file, or a directory of them (repeatable)")
    p.add_argument("--nodes", type=int, default=3, metavar="N", help="nodes node-1 … node-N (default 3)")
    p.add_argument("--until", type=float, default=60.0, metavar="SECONDS",
                   help="run until this logical time (default 60)")
    p.add_argument("--apply", dest="applies", action="append", default=[], metavar="FILE_OR_DIR@SECONDS",
                   help="one more kubectl apply -f at that logical time, e.g. examples/objects/database.yaml@5 "
                        "(repeatable)")
    p.add_argument("--fault", dest="faults", action="append", default=[], metavar="SPEC",
                   help="e.g. partition:node-2@60 (repeatable)")
    p.add_argument("--as", dest="as_user", default=None, metavar="USER",
                   help="send the requests as this user (default: the cluster admin)")
    p.add_argument("--seed", type=int, default=0, help="seed of the model's own choices (default 0)")
    p.add_argument("--controller-managers", type=int, default=1, metavar="N",
                   help="kube-controller-managers (default 1)")
    p.add_argument("--schedulers", type=int, default=1, metavar="N", help="kube-schedulers (default 1)")
    add_leader_elect_option(p)
    p.add_argument("--variant", default="default", metavar="NAME",
                   help="model variant (default: default; see kmodel variants)")
    add_fix_option(p, "simulate")
    add_component_option(p, "run the cluster")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from kmodel.cluster import DEFAULT_COMPONENTS

    components = components_from(args.components, DEFAULT_COMPONENTS)
    try:
        check_variant(args.variant)
        faults = [parse_fault(spec) for spec in args.faults]
        manifests = read_manifests(args.files)
        applies = [parse_apply(spec) for spec in args.applies]
        if args.until != args.until or args.until in (float("inf"), float("-inf")):
            raise InputError("--until must be a finite number of seconds")
        _, report = simulate(manifests, nodes=args.nodes, until_ms=round(args.until * 1000), faults=faults,
                             as_user=args.as_user, seed=args.seed, variant=args.variant, components=components,
                             fixes=fixes_from(args.fix), controller_managers=args.controller_managers,
                             schedulers=args.schedulers, leader_elect=args.leader_elect, applies=applies)
    except InputError as exc:
        raise KmodelUsageError(str(exc)) from None
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(report))
    if report["rejected"]:  # on stderr too, as kubectl writes them, where a script or a terminal sees them
        sys.stdout.flush()
        print("\n".join(rejections(report)), file=sys.stderr)
    return 1 if report["rejected"] else 0
