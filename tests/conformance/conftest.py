"""Session fixture: one real etcd for the whole conformance suite, always killed afterwards."""

from __future__ import annotations

import shutil

import pytest

from etcd_gateway import EtcdProcess


@pytest.fixture(scope="session")
def etcd():
    binary = shutil.which("etcd") or ("/usr/bin/etcd" if shutil.os.path.exists("/usr/bin/etcd") else None)
    if binary is None:
        pytest.fail("the conformance suite needs a real etcd 3.4 server: apt-get install etcd-server")
    server = EtcdProcess(binary)
    try:
        server.start()
        yield server
    finally:
        server.stop()
