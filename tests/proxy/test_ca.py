"""The network layer's CA on a first run: created where it is first needed, once across
processes, private, never half-written; `pagewarden ca` shows, exports and regenerates it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from pagewarden.proxy import CAError, ca_info, ensure_ca, regenerate_ca, spki_pin
from pagewarden.proxy._ca import CA_CERT, CA_KEY


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _public(der_of: object) -> bytes:
    return der_of.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _key_matches_certificate(directory: Path) -> bool:
    raw = (directory / CA_KEY).read_bytes()
    key = load_pem_private_key(raw, None)
    certificate = x509.load_pem_x509_certificate((directory / CA_CERT).read_bytes())
    return _public(key.public_key()) == _public(certificate.public_key())


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pagewarden", "ca", *args],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def test_the_pin_creates_a_private_ca_on_first_use(empty_home: Path) -> None:
    config = empty_home / ".config" / "pagewarden"
    assert not config.exists()
    pin = spki_pin()  # what launch(proxy=True) asks for before any proxy started
    ca = config / "ca"
    assert (ca / CA_KEY).is_file() and (ca / CA_CERT).is_file()
    assert _mode(config) == 0o700 and _mode(ca) == 0o700
    assert _mode(ca / CA_KEY) == 0o600 and _mode(ca / "mitmproxy-ca.p12") == 0o600
    assert _key_matches_certificate(ca)
    assert pin == ca_info().spki_pin == spki_pin()  # made once: the same CA afterwards
    assert not [p for p in ca.iterdir() if p.name.startswith(".new-ca-")]


def test_a_named_directory_is_created_and_an_existing_shared_one_left_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    monkeypatch.setenv("PAGEWARDEN_CONFIG_DIR", str(shared))
    ensure_ca()
    assert _mode(shared) == 0o755  # the user's own directory keeps its mode
    assert _mode(shared / "ca") == 0o700


def test_an_existing_loose_ca_directory_is_made_private(empty_home: Path) -> None:
    ca = empty_home / ".config" / "pagewarden" / "ca"
    ca.mkdir(parents=True)
    os.chmod(ca, 0o755)
    ensure_ca()
    assert _mode(ca) == 0o700


_RACE = """
import sys, time
from pathlib import Path
go = Path(sys.argv[1])
(go.parent / f"ready-{sys.argv[2]}").touch()
while not go.exists():
    time.sleep(0.001)
from pagewarden.proxy import spki_pin
print(spki_pin())
"""


def test_processes_starting_at_once_make_one_ca(empty_home: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    workers = [
        subprocess.Popen([sys.executable, "-c", _RACE, str(go), str(n)], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for n in range(6)
    ]  # fmt: skip
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("ready-*"))) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)  # every interpreter at the start line, then all go at once
    go.touch()
    outputs = [worker.communicate(timeout=120) for worker in workers]
    assert [w.returncode for w in workers] == [0] * 6, [err for _, err in outputs]
    pins = {out.strip() for out, _ in outputs}
    ca = empty_home / ".config" / "pagewarden" / "ca"
    assert pins == {spki_pin()}, "each process must see the one CA that is on disk"
    assert _key_matches_certificate(ca)
    assert sorted(p.name for p in ca.iterdir() if not p.name.startswith(".")) == sorted([
        "mitmproxy-ca-cert.cer", "mitmproxy-ca-cert.p12", "mitmproxy-ca-cert.pem",
        "mitmproxy-ca.p12", "mitmproxy-ca.pem", "mitmproxy-dhparam.pem",
    ])  # fmt: skip
    assert not [p for p in ca.iterdir() if p.name.startswith(".new-ca-")]


def test_a_damaged_ca_is_a_clear_error_and_regenerate_mends_it(empty_home: Path) -> None:
    directory = ensure_ca()
    (directory / CA_KEY).write_text("-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n")
    with pytest.raises(CAError, match=r"damaged.*pagewarden ca --regenerate"):
        spki_pin()
    info = regenerate_ca()
    assert _key_matches_certificate(directory)
    assert spki_pin() == info.spki_pin


def test_an_unwritable_directory_names_itself_and_the_variable(tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PAGEWARDEN_CONFIG_DIR", str(blocker / "pagewarden"))
    with pytest.raises(OSError) as raised:
        spki_pin()
    message = str(raised.value)
    assert str(blocker / "pagewarden") in message and "PAGEWARDEN_CONFIG_DIR" in message
    done = _cli()
    assert done.returncode == 1
    assert "PAGEWARDEN_CONFIG_DIR" in done.stderr and "Traceback" not in done.stderr


def test_cli_shows_exports_and_regenerates(empty_home: Path, tmp_path: Path) -> None:
    shown = _cli()
    assert shown.returncode == 0, shown.stderr
    info = ca_info()  # the CLI made it; this process reads the same one
    assert str(info.directory) in shown.stdout and info.spki_pin in shown.stdout
    assert info.sha256_fingerprint in shown.stdout
    target = tmp_path / "exported.pem"
    exported = _cli("--export", str(target), "--json")
    assert exported.returncode == 0, exported.stderr
    facts = json.loads(exported.stdout)
    assert facts["spki_pin"] == info.spki_pin and facts["exported_to"] == str(target)
    pem = target.read_text()
    assert "PRIVATE KEY" not in pem
    assert pem.encode() == (info.directory / CA_CERT).read_bytes()
    assert spki_pin(target) == info.spki_pin
    regenerated = _cli("--regenerate", "--json")
    assert regenerated.returncode == 0, regenerated.stderr
    new = json.loads(regenerated.stdout)
    assert new["regenerated"] and new["spki_pin"] != info.spki_pin
    assert new["sha256_fingerprint"] != info.sha256_fingerprint
    assert spki_pin() == new["spki_pin"] and _key_matches_certificate(info.directory)
