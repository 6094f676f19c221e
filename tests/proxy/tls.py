"""A throwaway CA and HTTPS servers on 127.0.0.1 for the network layer's TLS tests."""

from __future__ import annotations

import datetime
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())  # fmt: skip


def make_ca(
    directory: Path, name: str = "pagewarden test CA"
) -> tuple[Path, ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A CA certificate (written to DIR/<name>.pem) and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(_name(name)).issuer_name(_name(name))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False,
        ), critical=True)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    path = directory / f"{name.replace(' ', '-')}.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, key, cert


def make_server_cert(directory: Path, host: str, ca_key, ca_cert) -> tuple[Path, Path]:
    """A certificate for `host` signed by the CA (cert and key files)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder().subject_name(_name(host)).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = directory / f"{host}.pem", directory / f"{host}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(_pem_key(key))
    return cert_path, key_path


class HTTPSServer:
    """Serves ``<h1>secure</h1>`` (or `pages[path]`, path without its query) over TLS with the
    given certificate; records each request's path and headers."""

    def __init__(self, cert: Path, key: Path, pages: dict[str, str] | None = None) -> None:
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        server = self
        served = dict(pages or {})

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.paths.append(self.path)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                page = served.get(self.path.split("?", 1)[0])
                body = (page or "<!doctype html><title>Secure</title><h1>secure</h1>").encode()
                self.send_response(200)
                kind = "text/javascript" if self.path.split("?", 1)[0].endswith(".js") else "text/html"
                self.send_header("Content-Type", kind)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._httpd.socket = context.wrap_socket(self._httpd.socket, server_side=True)
        self.port: int = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
