"""The `--component` option of `kmodel check` and `kmodel simulate`: components of your own join the cluster.

    --component package.module:factory      (repeatable, or comma-separated)

Each value names a registered component (kmodel.component.registry): a decorated factory or controller class
by its import path, an entry point's name of the group ``kmodel.components``, or a built-in's name. The cluster
runs the default components and these; a value that names none is a usage error (one line, exit 2).
"""

from __future__ import annotations

from typing import Any, Sequence

from kmodel.component.registry import ComponentError, resolve
from kmodel.errors import KmodelUsageError


def add_component_option(parser: Any, what: str) -> None:
    parser.add_argument("--component", dest="components", action="append", default=[], metavar="SPEC",
                        help=f"{what} with this component of your own as well: package.module:factory, a factory "
                             f"or controller registered with @component/@controller (kmodel.component.registry), "
                             f"or an entry point of the group kmodel.components (repeatable or comma-separated)")


def components_from(values: Sequence[str], base: Sequence[str]) -> tuple[str, ...]:
    """`base` followed by the --component values (comma-separated or repeated), each once; KmodelUsageError for a
    value that names no registered component."""
    names = list(dict.fromkeys(part.strip() for value in values for part in value.split(",") if part.strip()))
    for name in names:
        try:
            resolve(name)
        except ComponentError as exc:
            raise KmodelUsageError(f"--component {exc}") from None
    return tuple(dict.fromkeys([*base, *names]))
