"""The `kmodel` command.

Each subcommand is a small function taking parsed arguments and returning an exit code. Usage errors exit 2
with one line on stderr (argparse's own behaviour, kept for every subcommand); a `KmodelUsageError` raised by a
subcommand is reported the same way, never as a traceback. Anything else is a bug in kmodel: one line, exit 3,
and the traceback only when KMODEL_TRACEBACK is set.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from kmodel import __version__
from kmodel.checker import command as checker_command
from kmodel.errors import KmodelUsageError
from kmodel.fixes import command as fixes_command
from kmodel.runtime import tune_gc
from kmodel.serve import command as serve_command
from kmodel.serve import ctl as ctl_command
from kmodel.simulate import command as simulate_command
from kmodel.variants import command as variants_command

__all__ = ["KmodelUsageError", "build_parser", "console_main", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kmodel",
        description="A property-based model checker for the Kubernetes control plane.",
    )
    parser.add_argument("--version", action="version", version=f"kmodel {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    simulate_command.register(subparsers)
    checker_command.register(subparsers)
    variants_command.register(subparsers)
    variants_command.register_principles(subparsers)
    fixes_command.register(subparsers)
    serve_command.register(subparsers)
    ctl_command.register(subparsers)
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
        code = int(handler(args))
        sys.stdout.flush()  # here, not at exit, so that a reader gone away is seen below
        return code
    except KmodelUsageError as exc:
        print(f"kmodel {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # whoever read the output stopped reading (`kmodel replay T | head`): stop quietly, as Unix tools do,
        # with the shell's status for a process ended by SIGPIPE; nothing more may reach the closed pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE_EXIT
    except Exception as exc:  # a bug in kmodel, not in the input: one line, the traceback on request
        if os.environ.get("KMODEL_TRACEBACK"):
            raise
        print(f"kmodel {args.command}: internal error: {type(exc).__name__}: {exc} "
              "(a bug in kmodel: set KMODEL_TRACEBACK=1 to see where, and please report it)", file=sys.stderr)
        return 3


#: 128 + SIGPIPE, what a shell reports for a command whose reader went away
BROKEN_PIPE_EXIT = 141


def console_main() -> int:
    """The `kmodel` command: `main` in a process of its own, whose GC is tuned for a model run (a model
    run only grows its heap: see kmodel/runtime.py). Tests call `main` and leave their process alone."""
    tune_gc()
    return main()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())
