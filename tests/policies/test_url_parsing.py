"""Browser-like URL and host parsing (pagewarden._url) against attacker spellings."""

from __future__ import annotations

import pytest

from pagewarden._url import host_matches, parse_url, registrable_domain, resolve_url, same_site


@pytest.mark.parametrize(
    ("url", "host"),
    [
        # userinfo is not the host
        ("https://allowed.com@evil.com/", "evil.com"),
        ("https://allowed.com:443@evil.com/", "evil.com"),
        ("https://a@b@evil.com/", "evil.com"),
        # a backslash ends the authority in special URLs, as a slash does
        ("https://allowed.com\\@evil.com/", "allowed.com"),
        ("https:\\\\evil.com\\path", "evil.com"),
        ("http:evil.com/x", "evil.com"),
        ("https:///evil.com", "evil.com"),
        # fragment and query end the authority
        ("https://evil.com#@allowed.com", "evil.com"),
        ("https://evil.com?@allowed.com", "evil.com"),
        # case, trailing dot, full-width letters and dots
        ("HTTPS://EVIL.COM./", "evil.com"),
        ("https://ｅｖｉｌ．ｃｏｍ/", "evil.com"),
        # percent-encoded hosts are decoded
        ("https://%65vil.com/", "evil.com"),
        ("https://ev%69l.c%6Fm/", "evil.com"),
        # tabs and newlines anywhere, controls and spaces at the ends
        ("https://ev\til.co\nm/", "evil.com"),
        ("\x00 https://evil.com/ \x1f", "evil.com"),
        # invisible characters are ignored by IDNA mapping
        ("https://ev\u200bil.com/", "evil.com"),
        ("https://ev\u00adil.com/", "evil.com"),
        # IDN: Unicode hosts become punycode; look-alikes stay different hosts
        ("https://bücher.de/", "xn--bcher-kva.de"),
        ("https://аpple.com/", "xn--pple-43d.com"),
        ("https://faß.de/", "xn--fa-hia.de"),
        # IPv4 in every browser spelling
        ("http://127.0.0.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://0177.0.0.1/", "127.0.0.1"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
        ("http://127.0.0.1./", "127.0.0.1"),
        ("http://０ｘ７ｆ.０.０.１/", "127.0.0.1"),
        ("http://%31%32%37.0.0.1/", "127.0.0.1"),
        # IPv6
        ("http://[::1]/", "[::1]"),
        ("http://[0:0:0:0:0:0:0:1]:8080/", "[::1]"),
        ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
        # blob: URLs belong to their inner origin
        ("blob:https://evil.com/5e1f-uuid", "evil.com"),
    ],
)
def test_host_as_a_browser_reads_it(url: str, host: str) -> None:
    assert parse_url(url).host == host


@pytest.mark.parametrize(
    "url",
    [
        "https://allowed.com%40evil.com/",  # a decoded '@' is a forbidden host code point
        "https://evil .com/",
        "https://ex%00ample.com/",
        "https://a.com%2Fb.com/",
        "http://1.2.3.256/",  # ends in a number, but is no IPv4 address
        "http://1.2.3.999/",
        "http://0x1g.2/",
        "https://a.com:99999/",
        "https://a.com:8o/",
        "http://[::1%25eth0]/",
        "https://",
        "https://%ff.com/",
    ],
)
def test_invalid_urls_have_no_host(url: str) -> None:
    parsed = parse_url(url)
    assert not parsed.valid
    assert parsed.host == ""
    assert not host_matches(parsed.host, "*")


@pytest.mark.parametrize(
    ("url", "scheme"),
    [
        ("javascript:alert(1)", "javascript"),
        ("JaVaScRiPt:alert(1)", "javascript"),
        ("java\tscript:alert(1)", "javascript"),
        ("\x01javascript:alert(1)", "javascript"),
        (" javascript:alert(1)", "javascript"),
        ("data:text/html,<script>alert(1)</script>", "data"),
        ("about:blank", "about"),
        ("mailto:a@evil.com", "mailto"),
    ],
)
def test_opaque_urls_have_no_host(url: str, scheme: str) -> None:
    parsed = parse_url(url)
    assert parsed.scheme == scheme
    assert parsed.opaque
    assert parsed.host == ""
    assert parsed.origin == "null"


def test_file_urls_have_no_host_unless_named() -> None:
    assert parse_url("file:///etc/passwd").host == ""
    assert parse_url("file:///etc/passwd").path == "/etc/passwd"
    assert parse_url("file:\\\\server\\share").host == "server"
    assert parse_url("FILE:/etc/passwd").scheme == "file"


@pytest.mark.parametrize(
    ("relative", "base", "expected"),
    [
        ("/profile", "https://app.test/a/b", "https://app.test/profile"),
        ("../up", "https://app.test/a/b/c", "https://app.test/a/up"),
        ("//evil.com/x", "https://app.test/a", "https://evil.com/x"),
        ("\\\\evil.com\\x", "https://app.test/a", "https://evil.com/x"),
        ("/\\evil.com", "https://app.test/a", "https://evil.com/"),
        ("\t/\n/evil.com", "https://app.test/a", "https://evil.com/"),
        # a special scheme without slashes is relative on a page of the same scheme…
        ("https:evil.com", "https://app.test/a/b", "https://app.test/a/evil.com"),
        # …and absolute on a page of another scheme
        ("https:evil.com", "http://app.test/a/b", "https://evil.com/"),
        ("?q=1", "https://app.test/a/b", "https://app.test/a/b?q=1"),
    ],
)
def test_relative_links_resolve_like_a_browser(relative: str, base: str, expected: str) -> None:
    assert parse_url(relative, base).url == expected
    assert parse_url(resolve_url(relative, base)).url == expected


def test_normalised_url_keeps_path_query_fragment_and_port() -> None:
    parsed = parse_url("HTTPS://User:Pw@Example.COM:8443/a/%70rofile?x=1#frag")
    assert parsed.url == "https://example.com:8443/a/%70rofile?x=1#frag"
    assert (parsed.port, parsed.query, parsed.fragment, parsed.has_userinfo) == (8443, "x=1", "frag", True)
    assert parsed.origin == "https://example.com:8443"


@pytest.mark.parametrize(
    ("host", "pattern", "expected"),
    [
        ("evil.com", "evil.com", True),
        ("EVIL.com.", "evil.com", True),
        ("sub.evil.com", "evil.com", False),
        ("sub.evil.com", "*.evil.com", True),
        ("evil.com", "*.evil.com", False),
        ("evil.com", ".evil.com", True),
        ("a.b.evil.com", ".evil.com", True),
        ("notevil.com", ".evil.com", False),
        ("evil.com.attacker.net", "evil.com", False),
        ("evil.com.attacker.net", "*.evil.com", False),
        ("xn--bcher-kva.de", "bücher.de", True),
        ("bücher.de", "xn--bcher-kva.de", True),
        ("xn--pple-43d.com", "apple.com", False),
        ("127.0.0.1", "0x7f.1", True),
        ("127.0.0.1", "2130706433", True),
        ("[::ffff:7f00:1]", "127.0.0.1", True),
        ("[::1]", "[0::1]", True),
        ("evil.com", "https://evil.com/path", True),
        ("evil.com", "evil.com:8080", True),
        ("anything.test", "*", True),
        ("", "*", False),
        ("", "evil.com", False),
    ],
)
def test_host_matches(host: str, pattern: str, expected: bool) -> None:
    assert host_matches(host, pattern) is expected


def test_sites() -> None:
    assert registrable_domain("a.b.example.co.uk") == "example.co.uk"
    assert registrable_domain("a.forum.test") == "forum.test"
    assert registrable_domain("127.0.0.1") == "127.0.0.1"
    assert same_site("a.forum.test", "b.forum.test")
    assert not same_site("forum.test", "evil.test")
    assert not same_site("", "forum.test")
