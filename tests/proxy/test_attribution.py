"""Which guarded session a request belongs to (`SessionTokens`), decided by what the page cannot
forge: the proxy port its browser context goes through. Flows as mitmproxy hands them to the
addon; the browser tests (`test_modern_app.py`, `test_launch_routes.py`) show Chromium sending
each kind of request to the context's port."""

from __future__ import annotations

from typing import Any

from mitmproxy.test import tflow

from pagewarden import Guard
from pagewarden.proxy import session_proxy
from pagewarden.proxy._tokens import SessionTokens, accept_language

MAIN, OWN = 41000, 41001
TOKEN = "ab" * 12


def _addon() -> tuple[SessionTokens, list[Any]]:
    refused: list[Any] = []
    addon = SessionTokens(known={TOKEN}.__contains__, report=refused.append, port_owner={OWN: TOKEN}.get)
    addon.require = True
    return addon, refused


def _flow(port: int, headers: dict[str, str], method: str = "GET", path: str = "/x") -> Any:
    flow = tflow.tflow()
    flow.client_conn.sockname = ("127.0.0.1", port)
    flow.request.method = method
    flow.request.host, flow.request.path = "api.test", path
    flow.request.headers.clear()
    for name, value in headers.items():
        flow.request.headers[name] = value
    return flow


PAGE_MADE = {  # requests Chromium sends without the context's extra headers
    "preflight": ({"Origin": "http://app.test", "Access-Control-Request-Method": "POST"}, "OPTIONS"),
    "keepalive": ({"Origin": "http://app.test", "Referer": "http://app.test/"}, "POST"),
    "worker_fetch": ({"Referer": "http://app.test/worker.js", "Accept": "*/*"}, "GET"),
    "service_worker_script": ({"Service-Worker": "script", "Sec-Fetch-Site": "same-origin"}, "GET"),
}


def test_requests_without_the_token_on_the_sessions_port_are_the_sessions() -> None:
    addon, refused = _addon()
    for headers, method in PAGE_MADE.values():
        flow = _flow(OWN, headers, method)
        addon.requestheaders(flow)
        assert flow.metadata.get("pagewarden_session") == TOKEN and flow.response is None
        assert "pagewarden_tab" not in flow.metadata
    assert refused == []


def test_the_same_requests_on_the_main_port_are_refused() -> None:
    """The browser-wide proxy setting (Chromium's own traffic) carries nothing of a session."""
    addon, refused = _addon()
    for headers, method in PAGE_MADE.values():
        flow = _flow(MAIN, headers, method)
        addon.requestheaders(flow)
        assert "pagewarden_session" not in flow.metadata
        assert flow.response is not None and flow.response.status_code == 403
    assert {r.rule for r in refused} == {"no_session"}


def test_chromiums_own_request_on_the_sessions_port_is_refused() -> None:
    """An autofill query of the context names no document or worker: refused, not judged."""
    addon, refused = _addon()
    flow = _flow(OWN, {"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "no-cors", "X-Goog-Api-Key": "k"})
    addon.requestheaders(flow)
    assert "pagewarden_session" not in flow.metadata
    assert flow.response is not None and flow.response.status_code == 403
    assert [r.rule for r in refused] == ["no_session"]


def test_the_port_decides_over_the_token() -> None:
    addon, refused = _addon()
    tagged = _flow(OWN, {"Accept-Language": accept_language(TOKEN, tab="t3"), "Referer": "http://app.test/"})
    addon.requestheaders(tagged)
    assert (tagged.metadata["pagewarden_session"], tagged.metadata["pagewarden_tab"]) == (TOKEN, "t3")
    assert tagged.request.headers["accept-language"] == "en-US,en;q=0.9"  # the token never leaves
    other = "cd" * 12  # a token that is not this port's session's: its tab id means nothing here
    forged = _flow(OWN, {"Accept-Language": accept_language(other, tab="t1")})
    addon.requestheaders(forged)
    assert forged.metadata["pagewarden_session"] == TOKEN and "pagewarden_tab" not in forged.metadata
    legacy = _flow(MAIN, {"Accept-Language": accept_language(TOKEN, tab="t2")})  # a context set up by hand
    addon.requestheaders(legacy)
    assert (legacy.metadata["pagewarden_session"], legacy.metadata["pagewarden_tab"]) == (TOKEN, "t2")
    assert refused == []


def test_a_connect_on_the_sessions_port_is_the_sessions() -> None:
    addon, _ = _addon()
    own, main = _flow(OWN, {}, "CONNECT"), _flow(MAIN, {}, "CONNECT")
    addon.http_connect(own)
    addon.http_connect(main)
    assert own.metadata.get("pagewarden_session") == TOKEN and "pagewarden_session" not in main.metadata


def test_a_download_no_action_led_to_is_refused_on_the_sessions_port() -> None:
    addon, refused = _addon()
    flow = _flow(OWN, {"Referer": "http://app.test/"})  # the download manager: no Accept, a Referer
    addon.requestheaders(flow)
    assert flow.response is not None and flow.response.status_code == 204
    assert [r.action for r in refused] == ["download"]


def test_the_session_proxy_gives_the_context_a_port_of_its_own() -> None:
    guard = Guard()
    server = session_proxy(guard)
    session = guard.network
    assert session.port in server.extra_ports and session.port != server.port
    assert session.proxy_url == f"http://127.0.0.1:{session.port}" != server.url


def test_a_navigation_a_service_worker_forwards_goes_only_to_a_site_a_tab_reached() -> None:
    """A service worker answering a navigation with its own fetch sends it with
    ``Sec-Fetch-Dest: empty`` and no tab id (only ever to its own origin): the session's grants
    take it when a tab the guard acts in reached the site; a page not tagged yet (a popup the
    page opened) keeps its own grants."""
    from pagewarden.proxy._grants import NavigationGrants, NetworkSession

    session = NetworkSession(Guard())
    session.tagged("t1", "http://app.test/")
    grants = NavigationGrants({session.token: session})

    def navigation(url: str, dest: str) -> Any:
        flow = _flow(OWN, {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": dest})
        flow.request.url = url
        flow.metadata["pagewarden_session"] = session.token
        grants.request(flow)
        return flow.response

    assert navigation("http://app.test/inbox", "empty") is None
    refused = navigation("http://evil.test/inbox", "empty")
    assert refused is not None and refused.status_code == 204
    popup = navigation("http://app.test/inbox", "document")  # a page not tagged: tab None's grants
    assert popup is not None and popup.status_code == 204
