"""Errors shared by the `kmodel` command and its subcommands.

`KmodelUsageError` is raised by a subcommand (kmodel/*/command.py) for input it cannot use, and reported by
`kmodel.cli.main` as one line on stderr with exit code 2. It lives here, below both, so that the command
modules and cli.py need not import each other.
"""

from __future__ import annotations


class KmodelUsageError(Exception):
    """Input the command cannot use: reported as one line on stderr, exit code 2."""
