"""The `kmodel` command's start: what must happen before the model is imported, then `kmodel.cli`.

`kmodel check --reach` measures the branch outcomes of the model with coverage.py (kmodel.checker.reach). Some
of the model's functions run while the model is imported (the built-in components register themselves) and
while the check reads its options (resolving --component values, checking --fix names): a measurement started
after `kmodel.cli` is imported would count those as never taken. So this module, which imports none of the
model, starts the measurement first when the arguments ask for it, then imports the command.
"""

from __future__ import annotations

import sys
from typing import Sequence


def asks_for_reach(argv: Sequence[str]) -> bool:
    """Whether `argv` (without the program's name) is `check ... --reach`: the option spelt in full, before any
    `--` (an abbreviation or a value given to --component still works, measured from the options on)."""
    args = list(argv[:argv.index("--")] if "--" in argv else argv)
    return bool(args) and args[0] == "check" and "--reach" in args


def component_modules(argv: Sequence[str]) -> list[str]:
    """The modules of the --component values of `argv` given as package.module:factory (comma-separated or
    repeated, as `--component X` or `--component=X`), in order, each once. A value naming an entry point or a
    built-in has no module here: a built-in is in the model packages, and a check naming an entry point
    measures from the options on (kmodel.checker.reach.Measurement)."""
    values = []
    for i, arg in enumerate(argv):
        if arg == "--component" and i + 1 < len(argv):
            values.append(argv[i + 1])
        elif arg.startswith("--component="):
            values.append(arg.partition("=")[2])
    specs = [part.strip() for value in values for part in value.split(",")]
    return list(dict.fromkeys(spec.partition(":")[0] for spec in specs if ":" in spec))


def console_main() -> int:
    """The `kmodel` command (and `python -m kmodel`): start measuring first if asked, then run kmodel.cli."""
    if asks_for_reach(sys.argv[1:]):
        from kmodel.checker.reach import start_before_import

        start_before_import(component_modules(sys.argv[1:]))
    from kmodel.cli import console_main as run

    return run()
