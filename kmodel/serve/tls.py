"""The server's self-signed certificate, made with the `openssl` command (an ECDSA P-256 key, valid for 127.0.0.1
and localhost), written beside the kubeconfig, which trusts it as its certificate authority. kubectl and client-go
send a bearer token only over TLS (clientcmd reads a user's credentials only for a TLS transport), so the server
speaks HTTPS unless asked for plain HTTP."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path


class TLSError(RuntimeError):
    """The certificate could not be made (one line, for the CLI)."""


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """(certificate, key) files in `folder`, made anew."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise TLSError("the openssl command is needed to make the server's certificate: install openssl, "
                       "or serve plain HTTP with --http")
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "server.crt", folder / "server.key"
    result = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "365", "-subj", "/CN=kmodel-serve",
         "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["no message"])[-1]
        raise TLSError(f"openssl could not make the server's certificate: {last}")
    key.chmod(0o600)
    return cert, key


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    return context
