"""The `--leader-elect` option that check, simulate and serve share: kube-controller-manager's and kube-scheduler's
flag of the same name, on by default (`ClusterConfig.leader_elect`)."""

from __future__ import annotations

import argparse

#: the spellings Go's strconv.ParseBool accepts, as a Kubernetes component reads a boolean flag
_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_bool_flag(value: str) -> bool:
    """A boolean flag's value as a Kubernetes component reads it (strconv.ParseBool); ArgumentTypeError else."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"{value!r} is not a boolean: give true or false")


def add_leader_elect_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--leader-elect", type=parse_bool_flag, nargs="?", const=True, default=True,
                        metavar="true|false",
                        help="run kube-controller-manager and kube-scheduler with leader election, as upstream's "
                             "flag of that name (default true: each copy, a lone one too, elects on its Lease and "
                             "exits when it cannot renew); --leader-elect=false: one copy of each that never "
                             "exits for want of a lease")
