"""What installing kmodel puts on a user's path: every package listed in pyproject.toml, the invariants as
`kmodel.invariants` and nothing as a top-level `invariants`, so a project with its own `invariants.py` runs
pytest (with kmodel's plugin loaded, as it is wherever kmodel is installed) as it would without kmodel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_lists_every_package_folder() -> None:
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = config["package-dir"]
    assert folders == {"kmodel.invariants": "invariants"}
    found = set()
    for init in (ROOT / "kmodel").rglob("__init__.py"):
        found.add(".".join(init.parent.relative_to(ROOT).parts))
    for name, folder in folders.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            found.add(".".join([name, *init.parent.relative_to(ROOT / folder).parts]))
    assert sorted(config["packages"]) == sorted(found), \
        "pyproject.toml's [tool.setuptools] packages must list every package folder (a new one is not installed)"


def test_a_projects_own_invariants_module_neither_shadows_nor_is_shadowed(tmp_path: Path) -> None:
    (tmp_path / "invariants.py").write_text("def at_most_three(pods):\n    return len(pods) <= 3\n")
    (tmp_path / "test_mine.py").write_text(
        "import sys\n\n"
        "import invariants\n"
        "from kmodel.invariants.registry import SAFETY, Invariant\n\n\n"
        "def test_both_import():\n"
        "    assert invariants.at_most_three([1, 2])\n"
        "    assert Invariant and SAFETY\n"
        "    assert 'kmodel.pytest_plugin' in sys.modules  # the plugin is loaded, as in any project\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_mine.py"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "1 passed" in run.stdout
