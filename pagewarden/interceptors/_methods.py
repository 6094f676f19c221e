"""Which Playwright methods act, and how: the interception table.

Every public attribute of a wrapped object is one of:

* an **action** (`ActionSpec`): checked by the guard before it runs;
* **read-only** (`READ_ONLY`): passed straight through (results still wrapped, so a locator
  or page obtained from a read is guarded too);
* anything else — a method this table does not know, e.g. one added by a newer Playwright —
  is checked as an `unclassified` action, which the baseline sends to a human. New
  methods fail closed instead of opening a way around the guard.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ACTIONS", "READ_ONLY", "ActionSpec", "spec_for"]


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """How to describe and observe one action method.

    target: where the element is — "self" (the locator/handle), "selector" (first
        argument of a Page/Frame method), "point" (x, y arguments), "focused" (keyboard),
        "mouse" (the mouse's last position), "none".
    value: (positional index after the selector, keyword) of the value argument.
    """

    kind: str
    target: str = "self"
    value: tuple[int | None, str | None] = (None, None)
    drop: tuple[int | None, str | None] | None = None  # drag target


_SELF = {
    "click": ActionSpec("click"),
    "dblclick": ActionSpec("dblclick"),
    "tap": ActionSpec("tap"),
    "hover": ActionSpec("hover"),
    "focus": ActionSpec("focus"),
    "blur": ActionSpec("blur"),
    "check": ActionSpec("check"),
    "uncheck": ActionSpec("uncheck"),
    "set_checked": ActionSpec("check", value=(0, "checked")),
    "fill": ActionSpec("fill", value=(0, "value")),
    "clear": ActionSpec("clear"),
    "type": ActionSpec("type", value=(0, "text")),
    "press_sequentially": ActionSpec("type", value=(0, "text")),
    "press": ActionSpec("press", value=(0, "key")),
    "select_option": ActionSpec("select_option", value=(0, "value")),
    "select_text": ActionSpec("select_text"),
    "set_input_files": ActionSpec("set_input_files", value=(0, "files")),
    "dispatch_event": ActionSpec("dispatch_event", value=(0, "type")),
    "drag_to": ActionSpec("drag", drop=(0, "target")),
    "drop": ActionSpec("drop", value=(0, "payload")),
    "evaluate": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "evaluate_all": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "wait_for_function": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "evaluate_handle": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "eval_on_selector": ActionSpec("evaluate", target="none", value=(1, "expression")),
    "eval_on_selector_all": ActionSpec("evaluate", target="none", value=(1, "expression")),
}

_BY_SELECTOR = {
    name: ActionSpec(spec.kind, "selector", spec.value, spec.drop)
    for name, spec in _SELF.items()
    if name
    in {
        "click",
        "dblclick",
        "tap",
        "hover",
        "focus",
        "check",
        "uncheck",
        "set_checked",
        "fill",
        "type",
        "press",
        "select_option",
        "set_input_files",
        "dispatch_event",
    }
}

_PAGE_LEVEL = {
    "goto": ActionSpec("goto", target="none", value=(0, "url")),
    "go_back": ActionSpec("go_back", target="none"),
    "go_forward": ActionSpec("go_forward", target="none"),
    "reload": ActionSpec("reload", target="none"),
    "drag_and_drop": ActionSpec("drag", target="selector", drop=(0, "target")),
    "evaluate": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "evaluate_handle": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "eval_on_selector": ActionSpec("evaluate", target="none", value=(1, "expression")),
    "eval_on_selector_all": ActionSpec("evaluate", target="none", value=(1, "expression")),
    "wait_for_function": ActionSpec("evaluate", target="none", value=(0, "expression")),
    "add_script_tag": ActionSpec("add_script_tag", target="none", value=(None, "content")),
    "add_style_tag": ActionSpec("add_style_tag", target="none", value=(None, "content")),
    "add_init_script": ActionSpec("add_init_script", target="none", value=(0, "script")),
    "expose_function": ActionSpec("expose_function", target="none", value=(0, "name")),
    "expose_binding": ActionSpec("expose_function", target="none", value=(0, "name")),
    "set_content": ActionSpec("set_content", target="none", value=(0, "html")),
    "route": ActionSpec("route", target="none", value=(0, "url")),
    "route_from_har": ActionSpec("route", target="none", value=(0, "har")),
    "route_web_socket": ActionSpec("route", target="none", value=(0, "url")),
    "set_extra_http_headers": ActionSpec("network_config", target="none"),
}

_CONTEXT = {
    "new_page": ActionSpec("new_page", target="none"),
    "add_init_script": _PAGE_LEVEL["add_init_script"],
    "expose_function": _PAGE_LEVEL["expose_function"],
    "expose_binding": _PAGE_LEVEL["expose_binding"],
    "route": _PAGE_LEVEL["route"],
    "route_from_har": _PAGE_LEVEL["route_from_har"],
    "route_web_socket": _PAGE_LEVEL["route_web_socket"],
    "set_extra_http_headers": _PAGE_LEVEL["set_extra_http_headers"],
    "add_cookies": ActionSpec("network_config", target="none"),
    "clear_cookies": ActionSpec("network_config", target="none"),
    "set_storage_state": ActionSpec("network_config", target="none"),
    "grant_permissions": ActionSpec("network_config", target="none"),
    "set_geolocation": ActionSpec("network_config", target="none"),
    "set_offline": ActionSpec("network_config", target="none"),
    "new_cdp_session": ActionSpec("cdp", target="none"),
}

_REQUEST = {
    name: ActionSpec("request", target="none", value=(0, "url"))
    for name in ("get", "post", "put", "patch", "delete", "head", "fetch")
}

ACTIONS: dict[str, dict[str, ActionSpec]] = {
    "Locator": _SELF,
    "ElementHandle": {
        k: v for k, v in _SELF.items() if k not in {"evaluate_all", "blur", "clear", "drag_to", "drop"}
    },
    "JSHandle": {k: _SELF[k] for k in ("evaluate", "evaluate_handle")},
    "Page": {**_BY_SELECTOR, **_PAGE_LEVEL},
    "Frame": {
        **_BY_SELECTOR,
        **{k: v for k, v in _PAGE_LEVEL.items() if k not in {"go_back", "go_forward", "reload", "route"}},
    },
    "Keyboard": {
        "press": ActionSpec("press", target="focused", value=(0, "key")),
        "down": ActionSpec("press", target="focused", value=(0, "key")),
        "type": ActionSpec("type", target="focused", value=(0, "text")),
        "insert_text": ActionSpec("type", target="focused", value=(0, "text")),
    },
    "Mouse": {
        # a move is a hover at a point: the page's hover handlers run (and may navigate)
        "move": ActionSpec("hover", target="point"),
        "click": ActionSpec("click", target="point"),
        "dblclick": ActionSpec("dblclick", target="point"),
        "down": ActionSpec("click", target="mouse"),
    },
    "Touchscreen": {"tap": ActionSpec("tap", target="point")},
    "BrowserContext": _CONTEXT,
    "Browser": {
        "new_page": ActionSpec("new_page", target="none"),
        "new_browser_cdp_session": ActionSpec("cdp", target="none"),
        "bind": ActionSpec("cdp", target="none", value=(0, "title")),
    },
    "APIRequestContext": {
        **_REQUEST,
        "add_cookies": ActionSpec("network_config", target="none"),
        "clear_cookies": ActionSpec("network_config", target="none"),
    },
    "WebMCP": {"call_tool": ActionSpec("call_tool", target="none", value=(0, "name"))},
    "Credentials": {
        "create": ActionSpec("network_config", target="none"),
        "delete": ActionSpec("network_config", target="none"),
        "install": ActionSpec("network_config", target="none"),
    },
    "Debugger": {},
    "FileChooser": {"set_files": ActionSpec("set_input_files", target="chooser", value=(0, "files"))},
    "Dialog": {"accept": ActionSpec("accept_dialog", target="dialog", value=(0, "prompt_text"))},
    "Worker": {
        "evaluate": ActionSpec("evaluate", target="none", value=(0, "expression")),
        "evaluate_handle": ActionSpec("evaluate", target="none", value=(0, "expression")),
    },
    # Reached from events and routes: read-only, but wrapped so that the pages and frames
    # they lead to (response.frame, message.page …) stay guarded.
    "Request": {},
    "Response": {},
    "Route": {},
    "WebSocket": {},
    "WebSocketRoute": {},
    "ConsoleMessage": {},
    "Download": {},
    "WebError": {},
    "WebStorage": {},
    "Video": {},
    "Tracing": {},
    "Screencast": {},
    "FrameLocator": {},
    "Clock": {},
}


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_COMMON_READ = _names("on once remove_listener")
_GET_BY = _names(
    """get_by_alt_text get_by_label get_by_placeholder get_by_role get_by_test_id get_by_text
    get_by_title get_by_ref"""
)
_STATE = _names(
    """get_attribute inner_html inner_text input_value text_content is_checked is_disabled is_editable
    is_enabled is_hidden is_visible query_selector query_selector_all"""
)

READ_ONLY: dict[str, frozenset[str]] = {
    "Page": _COMMON_READ
    | _GET_BY
    | _STATE
    | _names(
        """aria_snapshot bring_to_front clear_console_messages clear_page_errors clock close console_messages
        content context emulate_media expect_console_message expect_download expect_event expect_file_chooser
        expect_navigation expect_popup expect_request expect_request_finished expect_response expect_websocket
        expect_worker frame frame_locator frames hide_highlight is_closed keyboard locator main_frame mouse
        opener page_errors pause pdf remove_locator_handler request request_gc requests screenshot
        set_default_navigation_timeout set_default_timeout set_viewport_size title touchscreen unroute
        unroute_all url video viewport_size wait_for_event wait_for_load_state wait_for_selector
        wait_for_timeout wait_for_url workers add_locator_handler local_storage session_storage
        cancel_pick_locator pick_locator screencast webmcp"""
    ),
    "Frame": _COMMON_READ
    | _GET_BY
    | _STATE
    | _names(
        """child_frames content expect_navigation frame_element frame_locator is_detached locator name page
        parent_frame title url wait_for_load_state wait_for_selector wait_for_timeout wait_for_url webmcp"""
    ),
    "Locator": _COMMON_READ
    | _GET_BY
    | _STATE
    | _names(
        """all all_inner_texts all_text_contents and_ aria_snapshot bounding_box content_frame count describe
        description element_handle element_handles filter first frame_locator hide_highlight highlight last
        locator normalize nth or_ page screenshot scroll_into_view_if_needed visible wait_for within"""
    ),
    "FrameLocator": _COMMON_READ | _GET_BY | _names("first frame_locator last locator nth owner"),
    "ElementHandle": _COMMON_READ
    | _STATE
    | _names(
        """as_element bounding_box content_frame dispose get_properties get_property json_value owner_frame
        screenshot scroll_into_view_if_needed wait_for_element_state wait_for_selector"""
    ),
    "JSHandle": _COMMON_READ | _names("as_element dispose get_properties get_property json_value"),
    "Keyboard": _COMMON_READ | _names("up"),
    "Mouse": _COMMON_READ | _names("up wheel"),
    "Touchscreen": _COMMON_READ,
    "BrowserContext": _COMMON_READ
    | _names(
        """background_pages browser clear_permissions clock close cookies expect_console_message expect_event
        expect_page is_closed pages request service_workers set_default_navigation_timeout
        set_default_timeout storage_state tracing unroute unroute_all wait_for_event credentials debugger"""
    ),
    "Browser": _COMMON_READ
    | _names(
        "browser_type close contexts is_connected new_context start_tracing stop_tracing version unbind"
    ),
    "APIRequestContext": _COMMON_READ | _names("dispose storage_state cookies tracing"),
    "WebMCP": _COMMON_READ | _names("tools"),
    "Credentials": _COMMON_READ | _names("get"),
    "Debugger": _COMMON_READ | _names("next paused_details request_pause resume run_to"),
    "FileChooser": _COMMON_READ | _names("element is_multiple page"),
    "Dialog": _COMMON_READ | _names("default_value dismiss message page type"),
    "Worker": _COMMON_READ | _names("expect_event url"),
    "Request": _COMMON_READ
    | _names(
        """all_headers existing_response failure frame header_value headers headers_array
        is_navigation_request method post_data post_data_buffer post_data_json redirected_from
        redirected_to resource_type response service_worker sizes timing url"""
    ),
    "Response": _COMMON_READ
    | _names(
        """all_headers body finished frame from_service_worker header_value header_values headers
        headers_array http_version json ok request security_details server_addr status status_text
        text url"""
    ),
    # Only reachable inside route handlers, whose registration needed approval.
    "Route": _COMMON_READ | _names("abort continue_ fallback fetch fulfill request"),
    "WebSocket": _COMMON_READ | _names("expect_event is_closed url wait_for_event"),
    "WebSocketRoute": _COMMON_READ | _names("close connect_to_server on_close on_message protocols send url"),
    "ConsoleMessage": _COMMON_READ | _names("args location page text timestamp type worker"),
    "Download": _COMMON_READ | _names("cancel delete failure page path save_as suggested_filename url"),
    "WebError": _COMMON_READ | _names("error location page"),
    "WebStorage": _COMMON_READ | _names("clear get_item items remove_item set_item"),
    "Video": _COMMON_READ | _names("delete path save_as"),
    "Tracing": _COMMON_READ | _names("group group_end start start_chunk start_har stop stop_chunk stop_har"),
    "Screencast": _COMMON_READ
    | _names("hide_actions hide_overlays show_actions show_chapter show_overlay show_overlays start stop"),
    "Clock": _COMMON_READ
    | _names("fast_forward install pause_at resume run_for set_fixed_time set_system_time"),
}


def spec_for(type_name: str, attr: str) -> ActionSpec | None:
    """The action spec of `attr` on a Playwright object of type `type_name`, or None."""
    return ACTIONS.get(type_name, {}).get(attr)
