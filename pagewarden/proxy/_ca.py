"""The proxy's certificate authority: one per installation and user, never in the repository.

mitmproxy generates it (``mitmproxy-ca.pem`` and friends) the first time a proxy starts with
the directory as its ``confdir``. The directory is ``$PAGEWARDEN_CONFIG_DIR/ca``, else
``$XDG_CONFIG_HOME/pagewarden/ca``, else ``~/.config/pagewarden/ca``, created private
(0700). Chromium trusts the CA by the SPKI hash of its key
(``--ignore-certificate-errors-spki-list``), not by ignoring certificate errors.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

__all__ = ["CA_CERT", "ca_dir", "config_dir", "spki_pin"]

#: The CA certificate mitmproxy writes into its confdir (PEM).
CA_CERT = "mitmproxy-ca-cert.pem"


def config_dir() -> Path:
    """pagewarden's per-user configuration directory."""
    env = os.environ.get("PAGEWARDEN_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "pagewarden"


def ca_dir() -> Path:
    """The directory of the proxy's CA (created, private)."""
    path = config_dir() / "ca"
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def spki_pin(cert: str | Path | None = None) -> str:
    """base64(sha256(SubjectPublicKeyInfo)) of the CA certificate: the value Chromium's
    ``--ignore-certificate-errors-spki-list`` takes. The CA must exist (a proxy started once)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    path = Path(cert) if cert is not None else ca_dir() / CA_CERT
    certificate = x509.load_pem_x509_certificate(path.read_bytes())
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")
