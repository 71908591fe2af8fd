"""The `kmodel fixes` subcommand, and the `--fix NAME` option that check, replay and simulate share."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any, Iterable, Optional

from kmodel.errors import KmodelUsageError
from kmodel.fixes import EXCEPT, FIXES, check_fixes

HELP = "list the fixes: opt-in changes that take out an upstream bug the default model reproduces"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("fixes", help=HELP, description=HELP,
                              epilog="turn one on with --fix NAME (repeatable) on check, replay and simulate")
    p.set_defaults(handler=fixes_command)


def add_fix_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--fix", action="append", default=[], metavar="NAME",
                        help=f"{what} with this fix of an upstream bug on (repeatable or comma-separated; 'all' "
                             f"for every one; `kmodel fixes` lists them)")
    # kept in the same list as --fix, marked: check_fixes leaves them out whatever else names them
    parser.add_argument("--no-fix", action="append", dest="fix", metavar="NAME", type=_left_out,
                        help="leave this fix out (repeatable or comma-separated): `--fix all --no-fix NAME` is "
                             "every fix but one, the model on which that fix's bug is looked for")


def _left_out(value: str) -> str:
    return ",".join(EXCEPT + part.strip() for part in value.split(",") if part.strip())


def fixes_from(values: Optional[Iterable[str]]) -> tuple[str, ...]:
    """The --fix values (each may also be a comma-separated list; "all" is every fix), checked: KmodelUsageError
    for an unknown one."""
    try:
        return check_fixes(list(values or ()))
    except ValueError as exc:
        raise KmodelUsageError(str(exc)) from None


def fixes_command(args: argparse.Namespace) -> int:
    width = max(len(f.name) for f in FIXES)
    indent = " " * (width + 2)
    for f in FIXES:
        print(f"{f.name.ljust(width)}  fixes {', '.join(f.invariants)}")
        for label, text in (("bug:     ", f.bug), ("changes: ", f.changes), ("where:   ", f.where),
                            ("upstream:", f.upstream), ("traces:  ", ", ".join(f"tests/regressions/{t}" for t in f.traces))):
            # broken only between words: a trace's file name or a path stays whole, to copy
            lines = textwrap.wrap(text, 100 - len(indent) - len(label) - 1, break_on_hyphens=False,
                                  break_long_words=False) or [""]
            print(f"{indent}{label} {lines[0]}")
            for line in lines[1:]:
                print(f"{indent}{' ' * len(label)} {line}")
    return 0
