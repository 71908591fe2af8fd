"""The `kmodel variants` subcommand: the anti-pattern variants, what each changes and where."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from kmodel.variants import VARIANTS

HELP = "list the model's variants: the real design and the anti-patterns the checker must catch"


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("variants", help=HELP, description=HELP,
                              epilog="use one with --variant NAME on check, replay and simulate")
    p.set_defaults(handler=variants_command)


def variants_command(args: argparse.Namespace) -> int:
    width = max(len(v.name) for v in VARIANTS)
    for v in VARIANTS:
        expect = ", ".join(v.expect) if v.expect else "nothing violated (it costs more)"
        if v.name == "default":
            expect = "nothing violated"
        print(f"{v.name.ljust(width)}  {v.principle}")
        indent = " " * (width + 2)
        for line in textwrap.wrap(f"changes: {v.changes}", 100 - len(indent)):
            print(indent + line)
        if v.where != "-":
            print(f"{indent}where:   {v.where}")
        print(f"{indent}expect:  {expect}")
    return 0
