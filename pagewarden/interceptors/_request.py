"""`page.request` / `context.request` calls: every redirect hop is judged before it is fetched.

Playwright's API request context follows redirects by itself (up to `max_redirects`, 20 by
default), so a same-site URL that answers 302 to another site would be fetched without the
guard seeing the second URL. Here the call is made with ``max_redirects=0`` and each hop is
followed by hand: the guard judges the hop's URL like a `request` action (a step of its own in
the trace) and fetches it only when allowed, with the method a browser would use (303, and
301/302 after a POST, become GET without a body).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from pagewarden._calls import Call
from pagewarden.steps import Decision, Step

if TYPE_CHECKING:
    from pagewarden.interceptors._wrappers import Guarded, SharedState

__all__ = ["follow_redirects"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_MAX = 20
#: options of the first call that carry over to the hops
_KEEP = ("headers", "timeout", "fail_on_status_code", "ignore_https_errors")


def _method_of(name: str, kwargs: dict[str, Any]) -> str:
    if name == "fetch":
        return str(kwargs.get("method") or "GET").upper()
    return name.upper()


def follow_redirects(
    shared: SharedState,
    owner: Guarded,
    name: str,
    method: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    step: Step,
) -> Generator[Call, Any, Any]:
    """Make the request `method(*args, **kwargs)`, judging each redirect hop before it."""
    limit = kwargs.get("max_redirects")
    limit = _DEFAULT_MAX if limit is None else int(limit)
    if limit <= 0:
        return (yield Call(method, args, kwargs))
    guard = shared.guard
    response = yield Call(method, args, {**kwargs, "max_redirects": 0})
    verb = _method_of(name, kwargs)
    body_kwargs = {k: kwargs[k] for k in ("data", "form", "multipart") if k in kwargs}
    kept = {k: kwargs[k] for k in _KEEP if k in kwargs}
    for hop in range(1, limit + 1):
        if response.status not in _REDIRECTS:
            return response
        location = response.headers.get("location")
        if not location:
            return response
        url = urljoin(response.url, location)
        if response.status == 303 or (response.status in (301, 302) and verb == "POST"):
            verb, body_kwargs = ("GET" if verb != "HEAD" else "HEAD"), {}
        action = replace(step.action, value=url, method=f"{step.action.method} (redirect {hop})")
        hop_step = guard.make_step(action, replace(step.observation, value_sources=()), step.reasoning)
        verdict = yield from guard.judge(hop_step)
        if verdict.decision is Decision.ASK and verdict.enforced:
            approved, problem = yield Call(guard.approval, (verdict, hop_step))
            if problem:
                verdict = guard.approver_problem(verdict, problem)
            if approved:
                verdict = replace(verdict, approved_by="approver")
        if not verdict.allowed:
            guard.commit(hop_step, verdict, ran=False)
            yield Call(response.dispose)
            raise guard.stop(hop_step, verdict)
        guard.commit(hop_step, verdict, ran=True)
        yield Call(response.dispose)
        response = yield Call(
            owner._pw_obj.fetch, (url,), {**kept, **body_kwargs, "method": verb, "max_redirects": 0}
        )
    return response
