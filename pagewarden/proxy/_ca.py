"""The proxy's certificate authority: one per installation and user, never in the repository.

It lives in ``ca/`` of the per-user directory (``$PAGEWARDEN_CONFIG_DIR``, else
``$XDG_CONFIG_HOME/pagewarden``, else ``~/.config/pagewarden``) in mitmproxy's file layout,
so a proxy started with it as ``confdir`` signs with it. Whatever needs it first (a proxy's
start, the SPKI pin for Chromium, ``pagewarden ca``) creates it: once, under a lock shared by
all processes, written to a temporary directory and renamed into place with the key last, so
no process ever reads a half-written CA. The directory is 0700, the key files 0600.
Chromium trusts the CA by the SPKI hash of its key (``--ignore-certificate-errors-spki-list``),
never by ignoring certificate errors.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pagewarden._userdir import UserDirError, config_dir, exclusive_lock, private_dir, unwritable

__all__ = [
    "CA_CERT",
    "CA_KEY",
    "CAError",
    "CAInfo",
    "ca_dir",
    "ca_info",
    "config_dir",
    "ensure_ca",
    "export_ca",
    "regenerate_ca",
    "spki_pin",
]

#: The CA certificate mitmproxy's layout has in its confdir (PEM, public).
CA_CERT = "mitmproxy-ca-cert.pem"
#: The CA's private key and certificate in one PEM file: what the proxy signs with.
CA_KEY = "mitmproxy-ca.pem"
#: mitmproxy's base name for the CA files.
_BASENAME = "mitmproxy"
#: Files holding the private key (0600); the others are public certificates and DH parameters.
_PRIVATE = ("mitmproxy-ca.pem", "mitmproxy-ca.p12")
_LOCK = ".ca.lock"
_KEY_SIZE = 2048


class CAError(UserDirError):
    """The CA cannot be created, read or exported; the message says what to do."""


@dataclass(frozen=True)
class CAInfo:
    """What a user needs to know of the CA: where it is and how to recognise it."""

    directory: Path
    certificate: Path
    spki_pin: str
    sha256_fingerprint: str
    subject: str
    not_before: datetime
    not_after: datetime


def ca_dir() -> Path:
    """The directory of the proxy's CA (created, private; the CA itself is not)."""
    return private_dir(private_dir(config_dir(), tighten=False) / "ca")


def _complete(directory: Path) -> bool:
    # the key file is renamed into place last: when it is there, the rest is
    return (directory / CA_KEY).is_file() and (directory / CA_CERT).is_file()


def _generate_into(directory: Path) -> None:
    """Write a new CA into `directory` (must be on the same file system as the target)."""
    from mitmproxy.certs import CertStore

    CertStore.create_store(
        directory, _BASENAME, _KEY_SIZE, organization="pagewarden", cn="pagewarden proxy CA"
    )
    for entry in directory.iterdir():
        os.chmod(entry, 0o600 if entry.name in _PRIVATE else 0o644)
        with open(entry, "rb") as handle:
            os.fsync(handle.fileno())


def _install(directory: Path) -> None:
    """Generate a CA and rename it into `directory`, the key last (caller holds the lock)."""
    staging = Path(tempfile.mkdtemp(prefix=".new-ca-", dir=directory))
    try:
        _generate_into(staging)
        names = sorted((p.name for p in staging.iterdir()), key=lambda name: name == CA_KEY)
        for name in names:
            os.replace(staging / name, directory / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _directory(directory: str | Path | None) -> Path:
    return private_dir(Path(directory)) if directory is not None else ca_dir()


def ensure_ca(directory: str | Path | None = None) -> Path:
    """The CA's directory (`ca_dir()` by default), with a CA in it: created if missing, once
    across processes starting at the same moment. Raises `CAError` when it cannot be."""
    path = _directory(directory)
    if _complete(path):
        return path
    try:
        with exclusive_lock(path / _LOCK):
            if not _complete(path):
                _install(path)
    except UserDirError:
        raise
    except OSError as exc:
        raise CAError(str(unwritable(path, exc))) from exc
    return path


def regenerate_ca(directory: str | Path | None = None) -> CAInfo:
    """Replace the CA with a new one (browsers pinned to the old one must take the new pin;
    proxies running now keep signing with the old one until they restart)."""
    path = _directory(directory)
    try:
        with exclusive_lock(path / _LOCK):
            _install(path)
    except UserDirError:
        raise
    except OSError as exc:
        raise CAError(str(unwritable(path, exc))) from exc
    return ca_info(path)


def _signing_certificate(path: Path):
    """The certificate the proxy signs with: the one beside the key in `CA_KEY` (or the
    first certificate of any other PEM file given)."""
    from cryptography import x509

    try:
        certificates = x509.load_pem_x509_certificates(path.read_bytes())
    except OSError as exc:
        raise CAError(f"cannot read the CA certificate {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CAError(
            f"the CA file {path} is damaged ({exc}); make a new CA with `pagewarden ca --regenerate`"
        ) from exc
    return certificates[0]


def _cert_path(cert: str | Path | None) -> Path:
    if cert is None:
        return ensure_ca() / CA_KEY
    path = Path(cert)
    if not path.exists() and path.name in (CA_CERT, CA_KEY):
        ensure_ca(path.parent)  # a proxy's own confdir: its CA comes into being here
        return path.parent / CA_KEY
    return path


def spki_pin(cert: str | Path | None = None) -> str:
    """base64(sha256(SubjectPublicKeyInfo)) of the CA certificate: the value Chromium's
    ``--ignore-certificate-errors-spki-list`` takes. Without `cert`, the per-user CA (created
    when missing); a missing `cert` named like a CA file is created in its directory."""
    from cryptography.hazmat.primitives import serialization

    certificate = _signing_certificate(_cert_path(cert))
    spki = certificate.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(hashlib.sha256(spki).digest()).decode("ascii")


def ca_info(directory: str | Path | None = None) -> CAInfo:
    """Where the CA is and how to recognise it (created when missing)."""
    from cryptography.hazmat.primitives import hashes

    path = ensure_ca(directory)
    certificate = _signing_certificate(path / CA_KEY)
    digest = certificate.fingerprint(hashes.SHA256()).hex().upper()
    return CAInfo(
        directory=path,
        certificate=path / CA_CERT,
        spki_pin=spki_pin(path / CA_KEY),
        sha256_fingerprint=":".join(digest[i : i + 2] for i in range(0, len(digest), 2)),
        subject=certificate.subject.rfc4514_string(),
        not_before=certificate.not_valid_before_utc,
        not_after=certificate.not_valid_after_utc,
    )


def export_ca(destination: str | Path, directory: str | Path | None = None) -> Path:
    """Write the CA's certificate (PEM; never the key) to `destination` for another browser or
    tool to trust; returns the path written."""
    from cryptography.hazmat.primitives import serialization

    path = ensure_ca(directory)
    pem = _signing_certificate(path / CA_KEY).public_bytes(serialization.Encoding.PEM)
    target = Path(destination).expanduser()
    try:
        target.write_bytes(pem)
    except OSError as exc:
        raise CAError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return target
