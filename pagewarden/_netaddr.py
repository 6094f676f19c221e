"""Which network an address lies in: the cloud's metadata service, a private range, or the
public internet.

`zone_of` takes a host as `pagewarden._url.parse_url` normalises it (an IPv4 address in
dotted-quad form whatever the URL wrote, an IPv6 literal in brackets, a lower-case name) and
says whether it is

* **metadata** — link-local addresses (``169.254.0.0/16``, ``fe80::/10``), which is where the
  big clouds serve instance metadata and credentials, the other fixed metadata addresses
  (AWS's ``fd00:ec2::254``, Alibaba's ``100.100.100.200``, Oracle's ``192.0.0.192``, Azure's
  ``168.63.129.16``) and the host names that resolve to them (``metadata.google.internal`` …);
* **private** — loopback (``127.0.0.0/8``, ``::1``, ``0.0.0.0/8``, which reaches this machine,
  ``localhost`` and ``*.localhost``, which Chromium resolves to loopback itself), RFC 1918
  (``10/8``, ``172.16/12``, ``192.168/16``), shared address space (``100.64.0.0/10``) and unique
  local IPv6 (``fc00::/7``);
* or neither (None): the public internet, or a name whose address is not known.

An IPv6 literal that carries an IPv4 address (``::ffff:a.b.c.d``, NAT64's ``64:ff9b::/96``, the
deprecated ``::a.b.c.d``) is judged by that IPv4 address. Each zone names its `block`: the range
a session that started in it may keep using, and that a policy allows by naming it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["IPAddress", "Zone", "ip_of", "zone_of", "zone_of_ip"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Host names that reach a cloud's instance metadata service (resolved by the cloud's DNS).
METADATA_NAMES: frozenset[str] = frozenset({
    "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "metadata.tencentyun.com", "metadata.packet.net",
    "metadata.platformequinix.com",
})  # fmt: skip
#: Fixed metadata addresses outside link-local space.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(a)
    for a in ("fd00:ec2::254", "fd00:ec2::23", "100.100.100.200", "192.0.0.192", "168.63.129.16")
)
_LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
#: (range, what it is) of the private zone; the first range an address is in is its block
_PRIVATE: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(net), what)
    for net, what in (
        ("127.0.0.0/8", "loopback (this machine)"),
        ("0.0.0.0/8", "this machine (0.0.0.0 reaches loopback)"),
        ("::1/128", "loopback (this machine)"),
        ("::/128", "this machine (:: reaches loopback)"),
        ("10.0.0.0/8", "a private network (RFC 1918)"),
        ("172.16.0.0/12", "a private network (RFC 1918)"),
        ("192.168.0.0/16", "a private network (RFC 1918)"),
        ("100.64.0.0/10", "shared address space (carrier-grade NAT, RFC 6598)"),
        ("fc00::/7", "a private network (unique local IPv6)"),
        ("fec0::/10", "a private network (site-local IPv6)"),
    )
)
#: the block a loopback name (``localhost``) and the other loopback ranges are used as
LOOPBACK_BLOCK = "127.0.0.0/8"
_LOOPBACK_SAME = frozenset({"127.0.0.0/8", "0.0.0.0/8", "::1/128", "::/128"})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


@dataclass(frozen=True, slots=True)
class Zone:
    """Where an address lies: ``kind`` ``metadata`` or ``private``, the ``block`` it is in (a
    CIDR range, or the metadata host's own name), and ``what`` it is, for messages."""

    kind: str
    block: str
    what: str

    @property
    def metadata(self) -> bool:
        """A cloud metadata or link-local address."""
        return self.kind == "metadata"


def ip_of(host: str) -> IPAddress | None:
    """The IP address a normalised host literally is (IPv4-in-IPv6 forms as their IPv4
    address), or None for a name."""
    text = host.strip().lower().rstrip(".")
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is None and int(address) >> 32 == 0 and int(address) > 0xFFFF:
            embedded = ipaddress.IPv4Address(int(address))  # ::a.b.c.d (deprecated form)
        if embedded is not None:
            return embedded
    return address


@lru_cache(maxsize=4096)
def zone_of_ip(address: IPAddress) -> Zone | None:
    """The zone of an IP address (None: public)."""
    if address in METADATA_ADDRESSES:
        return Zone("metadata", str(address), "a cloud metadata address")
    if any(address in net for net in _LINK_LOCAL if net.version == address.version):
        block = str(next(n for n in _LINK_LOCAL if n.version == address.version))
        return Zone("metadata", block, "a link-local address (where clouds serve instance metadata)")
    for net, what in _PRIVATE:
        if net.version == address.version and address in net:
            block = LOOPBACK_BLOCK if str(net) in _LOOPBACK_SAME else str(net)
            return Zone("private", block, what)
    return None


@lru_cache(maxsize=4096)
def zone_of(host: str) -> Zone | None:
    """The zone of a normalised host: an IP literal by its address, a name when it is a
    metadata or loopback name (None: public, or a name whose address is not known)."""
    text = host.strip().lower().rstrip(".")
    if not text:
        return None
    address = ip_of(text)
    if address is not None:
        return zone_of_ip(address)
    if text in METADATA_NAMES:
        return Zone("metadata", text, "a cloud metadata host")
    if text == "localhost" or text.endswith(".localhost"):
        return Zone("private", LOOPBACK_BLOCK, "loopback (this machine)")
    return None
