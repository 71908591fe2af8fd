"""Mermaid ships inside the package: found through importlib.resources, carried by a regular (non-editable) build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from kmodel.report.offline import MERMAID_JS, MERMAID_LICENSE, MERMAID_VERSION, mermaid_files

ROOT = Path(__file__).resolve().parents[2]


def test_mermaid_is_found_through_importlib_resources():
    assets = resources.files("kmodel.report").joinpath("assets")
    script = assets.joinpath(MERMAID_JS).read_text(encoding="utf-8")
    # the classic browser build (a global `mermaid`), not the ES module a file:// page may not import
    assert "__esbuild_esm_mermaid" in script[:200] and "export default" not in script[-2000:]
    assert 1_000_000 < len(script.encode()) < 6_000_000  # a few MB at most
    license_text = assets.joinpath(MERMAID_LICENSE).read_text(encoding="utf-8")
    assert MERMAID_VERSION in license_text and "MIT License" in license_text
    assert mermaid_files() == {MERMAID_JS: script, MERMAID_LICENSE: license_text}


def test_a_regular_install_carries_mermaid(tmp_path):
    """What a non-editable `pip install .` copies: setuptools' build_py, run on a clean copy of the sources
    (no egg-info to lean on), puts both files in the built package, from pyproject.toml's package data."""
    pytest.importorskip("setuptools")
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    for package in ("kmodel", "invariants"):
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    built = tmp_path / "lib"
    run = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                          "--build-lib", str(built)], cwd=source, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assets = built / "kmodel" / "report" / "assets"
    assert (assets / MERMAID_JS).read_bytes() == (ROOT / "kmodel/report/assets" / MERMAID_JS).read_bytes()
    assert (assets / MERMAID_LICENSE).is_file()
    # the top-level folder invariants/ installs as kmodel.invariants (pyproject.toml's package-dir), never as a
    # top-level package `invariants` that a user's own invariants.py would clash with
    assert (built / "kmodel" / "invariants" / "registry.py").is_file()
    assert not (built / "invariants").exists()
