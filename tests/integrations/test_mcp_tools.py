"""The server's other tools on a local page in real Chromium: dialogs, file choosers, tabs,
forms, keys, screenshots, page scripts, refs, and the streamable HTTP transport."""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagewarden.integrations.mcp import Clients, HttpOptions, ServerOptions
from pagewarden.testing import LocalSite, Response
from tests.integrations._mcp_client import http_client, http_server, mcp_session, ref, text_of

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

FORM = """<!doctype html><title>Form</title>
<h1>Profile</h1>
<label>Name <input id="name"></label>
<label>Password <input id="pw" type="password"></label>
<label>Colour <select id="colour"><option>red</option><option>green</option></select></label>
<label><input type="checkbox" id="news"> Newsletter</label>
<button id="ask" onclick="out.textContent = confirm('Really save?') ? 'saved' : 'kept'">Save</button>
<label>Avatar <input type="file" id="avatar" onchange="out.textContent = this.files[0].name"></label>
<a href="/other" target="_blank">Open other</a>
<p id="out">-</p>
<script>document.getElementById('name').addEventListener('keydown', e => {
  if (e.key === 'Enter') out.textContent = 'entered ' + e.target.value })</script>"""


@pytest.fixture(scope="module")
def site() -> Iterator[LocalSite]:
    with LocalSite() as local:
        local.route("app.test", "/", lambda r: Response(FORM))
        local.route(
            "app.test", "/other", lambda r: Response("<!doctype html><title>Other</title><p>Other page</p>")
        )
        yield local


def _options(site: LocalSite, tmp_path: Path, **changes) -> ServerOptions:
    base = dict(
        isolated=True, host_map={"*.test": site.port}, output_dir=tmp_path / "out", upload_dirs=(tmp_path,),
        proxy=False, goal="Fill in my profile on app.test.",
    )  # fmt: skip
    return ServerOptions(**{**base, **changes})


async def _open(client, site: LocalSite) -> str:
    result = await client.call_tool(
        "browser_navigate", {"url": site.url("app.test"), "intent": "Open the form."}
    )
    assert not result.isError, text_of(result)
    return text_of(result)


def _out(text: str) -> str:
    return next(line for line in text.splitlines() if "paragraph" in line and "[ref=" in line)


async def test_form_fields_keys_and_refs(site: LocalSite, tmp_path: Path) -> None:
    async with mcp_session(_options(site, tmp_path)) as (client, _):
        page = await _open(client, site)
        filled = await client.call_tool(
            "browser_fill_form",
            {
                "fields": [
                    {"name": "Name", "type": "textbox", "ref": ref(page, "textbox", "Name"), "value": "Ada"},
                    {
                        "name": "Colour",
                        "type": "combobox",
                        "ref": ref(page, "combobox", "Colour"),
                        "value": "green",
                    },
                    {
                        "name": "News",
                        "type": "checkbox",
                        "ref": ref(page, "checkbox", "Newsletter"),
                        "value": "true",
                    },
                ],
                "intent": "The user asked me to fill in the profile.",
            },
        )
        assert not filled.isError, text_of(filled)
        assert 'combobox "Colour"' in text_of(filled) and "[checked]" in text_of(filled)
        # Playwright MCP's newer argument name (target) is taken too
        key = await client.call_tool(
            "browser_type", {"target": ref(page, "textbox", "Name"), "text": "Ada L", "submit": True}
        )
        assert not key.isError, text_of(key)
        assert "entered Ada L" in _out(text_of(key))
        stale = await client.call_tool("browser_click", {"element": "x", "ref": "e9999"})
        assert stale.isError and "not found in the current page snapshot" in text_of(stale)
        forged = await client.call_tool("browser_click", {"element": "x", "ref": "body >> text=Save"})
        assert forged.isError and "not an element ref" in text_of(forged)


async def test_dialog_and_file_chooser_are_modal_states(site: LocalSite, tmp_path: Path) -> None:
    upload = tmp_path / "avatar.png"
    upload.write_bytes(b"\x89PNG")
    outside = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    outside.write_text("id_rsa")
    async with mcp_session(_options(site, tmp_path)) as (client, _):
        page = await _open(client, site)
        clicked = await client.call_tool(
            "browser_click", {"element": "Save", "ref": ref(page, "button", "Save")}
        )
        assert not clicked.isError and "### Modal state" in text_of(clicked), text_of(clicked)
        assert "Really save?" in text_of(clicked) and "browser_handle_dialog" in text_of(clicked)
        answered = await client.call_tool(
            "browser_handle_dialog", {"accept": True, "intent": "Save the profile."}
        )
        assert not answered.isError, text_of(answered)
        await asyncio.sleep(0.2)
        page = text_of(await client.call_tool("browser_snapshot", {}))
        assert "saved" in _out(page)
        no_dialog = await client.call_tool("browser_handle_dialog", {"accept": True})
        assert no_dialog.isError
        chooser = await client.call_tool(
            "browser_click", {"element": "Avatar", "ref": ref(page, "button", "Avatar")}
        )
        assert not chooser.isError, text_of(chooser)
        refused = await client.call_tool("browser_file_upload", {"paths": [str(outside)]})
        assert refused.isError and "Uploads are allowed only from" in text_of(refused)
        done = await client.call_tool(
            "browser_file_upload", {"paths": [str(upload)], "intent": "The user's avatar."}
        )
        assert not done.isError, text_of(done)
        assert "avatar.png" in _out(text_of(done))


async def test_tabs_new_select_close(site: LocalSite, tmp_path: Path) -> None:
    async with mcp_session(_options(site, tmp_path)) as (client, server):
        page = await _open(client, site)
        popup = await client.call_tool(
            "browser_click", {"element": "Open other", "ref": ref(page, "link", "Open other")}
        )
        assert not popup.isError, text_of(popup)
        await asyncio.sleep(0.5)
        listed = text_of(await client.call_tool("browser_tabs", {"action": "list"}))
        assert "[Other](http://app.test/other)" in listed and "[Form](http://app.test/)" in listed
        opened = await client.call_tool(
            "browser_tabs", {"action": "new", "url": site.url("app.test", "/other")}
        )
        assert not opened.isError and len(server.browser.tabs) == 3
        selected = text_of(await client.call_tool("browser_tabs", {"action": "select", "index": 0}))
        assert "- Page URL: http://app.test/" in selected
        closed = await client.call_tool("browser_tabs", {"action": "close", "index": 2})
        assert not closed.isError and len(server.browser.tabs) == 2
        missing = await client.call_tool("browser_tabs", {"action": "select", "index": 7})
        assert missing.isError


async def test_screenshot_masks_passwords_and_stays_in_the_output_dir(
    site: LocalSite, tmp_path: Path
) -> None:
    from PIL import Image

    async with mcp_session(_options(site, tmp_path)) as (client, _):
        page = await _open(client, site)
        typed = await client.call_tool(
            "browser_type",
            {"element": "Password", "ref": ref(page, "textbox", "Password"), "text": "hunter2!"},
        )
        assert not typed.isError, text_of(typed)
        shot = await client.call_tool("browser_take_screenshot", {"filename": "form.png"})
        assert not shot.isError, text_of(shot)
        image = next(part for part in shot.content if part.type == "image")
        escape = await client.call_tool("browser_take_screenshot", {"filename": "../../escape.png"})
        assert escape.isError and "inside the output directory" in text_of(escape)
    assert (tmp_path / "out" / "form.png").is_file() and not (tmp_path.parent / "escape.png").exists()
    picture = Image.open(io.BytesIO(base64.b64decode(image.data))).convert("RGB")
    # the password field is painted over (the mask's dark grey), not shown as dots on white
    dark = sum(1 for pixel in picture.getdata() if pixel == (32, 32, 32))
    assert dark > 200


async def test_page_scripts_are_refused_without_a_console(site: LocalSite, tmp_path: Path) -> None:
    async with mcp_session(_options(site, tmp_path)) as (client, _):
        await _open(client, site)
        result = await client.call_tool("browser_evaluate", {"function": "() => document.cookie"})
    assert result.isError
    text = text_of(result)
    assert text.startswith("pagewarden refused this action.") and "no pagewarden console supervises" in text
    # guidance an MCP model can follow: no tool of another framework, its own reply to the user instead
    assert "send_msg_to_user" not in text and "in your reply" in text
    async with mcp_session(_options(site, tmp_path, evaluate=False)) as (client, _):
        assert "browser_evaluate" not in {t.name for t in (await client.list_tools()).tools}


async def test_streamable_http_transport(site: LocalSite, tmp_path: Path) -> None:
    import httpx

    token = "http-transport-test-token-" + "t" * 16
    http = HttpOptions(clients=Clients.from_token(token))
    async with http_server(_options(site, tmp_path), http) as (url, _):
        async with http_client(url, token) as client:
            page = text_of(await client.call_tool("browser_navigate", {"url": site.url("app.test")}))
            assert "- Page Title: Form" in page
            stopped = await client.call_tool("browser_evaluate", {"function": "() => 1"})
            assert stopped.isError
        # DNS rebinding: a Host that is not the server's is refused
        port = url.rsplit(":", 1)[1].split("/")[0]
        async with httpx.AsyncClient() as raw:
            answer = await raw.post(
                url, headers={"Host": f"evil.test:{port}", "Authorization": f"Bearer {token}"}, json={}
            )
        assert answer.status_code in (400, 403, 421)


async def test_ask_goes_to_the_console_where_a_person_approves(site: LocalSite, tmp_path: Path) -> None:
    """--console URL: the server's guard attaches to a running console; a page script (ASK under
    the baseline) waits for the person, who approves it there, and then it runs."""

    from pagewarden.console import Console

    # a console in another thread, reached by its URL, as `pagewarden console` in another process
    console = Console(approval_timeout=60).start()
    try:
        await _supervised(site, tmp_path, console.url)
    finally:
        console.close()


async def _supervised(site: LocalSite, tmp_path: Path, console_url: str) -> None:
    from playwright.async_api import async_playwright

    from pagewarden._browser import chromium_launch_options

    async with mcp_session(_options(site, tmp_path, console=console_url)) as (client, server):
        await _open(client, site)
        call = asyncio.ensure_future(
            client.call_tool("browser_evaluate", {"function": "() => 6 * 7", "intent": "The user asked."})
        )
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**chromium_launch_options())
            person = await browser.new_page()
            await person.goto(console_url + f"&session={server.guard.session_id}")
            card = person.locator(".approval[data-status='pending']")
            await card.wait_for(timeout=30000)
            assert "6 * 7" in await card.inner_text()
            await card.locator("button.approve").click()
            result = await asyncio.wait_for(call, 60)
            await browser.close()
    assert not result.isError, text_of(result)
    # the result is a fenced line of its own, not a "Page Title" (the page's title is "Form")
    assert "\n42\n<<<END UNTRUSTED PAGE" in text_of(result) and "Page Title" not in text_of(result)


async def test_close_then_the_next_call_starts_a_new_browser(site: LocalSite, tmp_path: Path) -> None:
    async with mcp_session(_options(site, tmp_path)) as (client, server):
        await _open(client, site)
        closed = await client.call_tool("browser_close", {})
        assert not closed.isError and not server.browser.started
        again = await _open(client, site)
        assert "- Page Title: Form" in again and server.browser.started
