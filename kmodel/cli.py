"""The `kmodel` command.

Each subcommand is a small function taking parsed arguments and returning an exit code. Usage errors exit 2
with one line on stderr naming the subcommand and its `--help` (`OneLineParser`: argparse's own refusals
print the whole usage first, which buries the error), never a traceback; a `KmodelUsageError` raised by a
subcommand is reported the same way. `kmodel` alone is a usage error too: one usage line, exit 2. Anything
else is a bug in kmodel: one line, exit 3, and the traceback only when KMODEL_TRACEBACK is set.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Sequence

from kmodel import __version__
from kmodel.checker import command as checker_command
from kmodel.errors import KmodelUsageError
from kmodel.fixes import command as fixes_command
from kmodel.runtime import tune_gc
from kmodel.serve import command as serve_command
from kmodel.serve import ctl as ctl_command
from kmodel.simulate import command as simulate_command
from kmodel.principles import command as variants_command

__all__ = ["KmodelUsageError", "OneLineParser", "build_parser", "console_main", "main"]


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose refusals are one line on stderr, exit 2: what is wrong, then where the usage is.
    The subcommands' parsers are of this class too (argparse makes them of their parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
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
    args, unknown = parser.parse_known_args(argv)
    if args.command is None:
        if unknown:
            parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        # no command: one line, as any usage error (`kmodel --help` lists the commands)
        print(f"{' '.join(parser.format_usage().split())} (see `kmodel --help`)", file=sys.stderr)
        return 2
    if unknown:  # refused by the subcommand's parser, so that the error names it rather than `kmodel`
        _subcommand_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(unknown)}")
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


def _subcommand_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices[name]
    return parser  # pragma: no cover - build_parser always adds the subcommands


#: 128 + SIGPIPE, what a shell reports for a command whose reader went away
BROKEN_PIPE_EXIT = 141


def console_main() -> int:
    """The `kmodel` command: `main` in a process of its own, whose GC is tuned for a model run (a model
    run only grows its heap: see kmodel/runtime.py). Tests call `main` and leave their process alone."""
    tune_gc()
    return main()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(console_main())
