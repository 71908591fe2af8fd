"""benchmarks/bench_ab.py without a campaign: its seed lists, and the bootstrap that runs a side's own checkout
(its kmodel, and its invariants as `kmodel.invariants` or as the older top-level `invariants`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_ab  # noqa: E402


def test_seed_lists_are_ranges_and_single_seeds():
    assert bench_ab.parse_seeds("1-10") == list(range(1, 11))
    assert bench_ab.parse_seeds("1,3,5-6") == [1, 3, 5, 6]


def test_a_seed_list_that_is_not_one_says_how_to_write_it():
    with pytest.raises(SystemExit, match="write e.g. 1-10"):
        bench_ab.parse_seeds("one")


def boot(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    return subprocess.run([sys.executable, "-c", bench_ab.BOOT, str(checkout), *args], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=120)


def fake_checkout(folder: Path, pyproject: str) -> Path:
    """A checkout of the older layout's shape: kmodel with a CLI that prints its argv, a top-level invariants."""
    (folder / "kmodel").mkdir()
    (folder / "kmodel" / "__init__.py").write_text("")
    (folder / "kmodel" / "cli.py").write_text("import sys\ndef console_main():\n    print('ran', sys.argv[1:])\n")
    (folder / "invariants").mkdir()
    (folder / "invariants" / "__init__.py").write_text("")
    (folder / "pyproject.toml").write_text(pyproject)
    return folder


def test_an_older_checkout_runs_its_own_kmodel_and_top_level_invariants(tmp_path):
    checkout = fake_checkout(tmp_path, "[project]\nname = 'kmodel'\n")
    done = boot(checkout, "check", "--seed", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran ['check', '--seed', '1']"
    kmodel, invariants = checkout / "kmodel" / "__init__.py", checkout / "invariants" / "__init__.py"
    assert f"imported {kmodel} and {invariants}" in done.stderr


def test_a_checkout_that_maps_invariants_gets_them_as_kmodel_invariants(tmp_path):
    checkout = fake_checkout(tmp_path, '[tool.setuptools.package-dir]\n"kmodel.invariants" = "invariants"\n')
    done = boot(checkout, "check")
    assert done.returncode == 0, done.stderr
    assert f"and {checkout / 'invariants' / '__init__.py'}" in done.stderr


def test_this_checkout_runs_as_itself():
    done = boot(ROOT, "invariants")
    assert done.returncode == 0, done.stderr
    assert f"imported {ROOT / 'kmodel' / '__init__.py'} and {ROOT / 'invariants' / '__init__.py'}" in done.stderr
