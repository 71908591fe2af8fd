"""A `kmodel serve` session on a free port, in this process, for the tests of this folder."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from kmodel.serve.kubeconfig import write_kubeconfig
from kmodel.serve.session import ServeSession


class Served:
    def __init__(self, session: ServeSession, kubeconfig: Path) -> None:
        self.session, self.kubeconfig = session, kubeconfig


def serve(tmp: Path, speed: float) -> Iterator[Served]:
    session = ServeSession(nodes=3, tls_dir=tmp, speed=speed)
    kubeconfig = tmp / "kubeconfig"
    write_kubeconfig(kubeconfig, session.url, session.users, session.certificate)
    session.start()
    try:
        yield Served(session, kubeconfig)
    finally:
        report = session.stop()
        assert report["model_error"] is None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory.mktemp("serve"), speed=5.0)


@pytest.fixture(scope="module")
def fast_served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """A session whose logical time runs ten times as fast as the wall clock."""
    yield from serve(tmp_path_factory.mktemp("serve-fast"), speed=10.0)
