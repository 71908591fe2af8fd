"""The `kmodel` command.

Each subcommand is a small function taking parsed arguments and returning an exit code. Usage errors exit 2
with one line on stderr (argparse's own behaviour, kept for every subcommand); a `KmodelUsageError` raised by a
subcommand is reported the same way, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from kmodel import __version__


class KmodelUsageError(Exception):
    """Input the command cannot use: reported as one line on stderr, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kmodel",
        description="A property-based model checker for the Kubernetes control plane.",
    )
    parser.add_argument("--version", action="version", version=f"kmodel {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler = getattr(args, "handler", None)
    if handler is None:  # pragma: no cover - every subcommand sets one
        parser.error(f"unknown command {args.command!r}")
    try:
        return int(handler(args))
    except KmodelUsageError as exc:
        print(f"kmodel {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
