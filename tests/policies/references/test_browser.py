"""References from a guarded Chromium page: a blocked click and a denied ASK are filed; an
approved ASK is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagewarden import ActionBlocked, ApprovalRequired, Guard, Policy
from pagewarden.policies.store import PolicyStore
from pagewarden.testing import LocalSite, Response

PAGE = """<!doctype html><html><head><title>Refs</title></head><body><main>
<a href="/admin/users">Admin area</a>
<button onclick="document.title='paid'">Pay now</button>
</main></body></html>"""


@pytest.mark.browser
async def test_guarded_page_files_its_confirmed_violations(context, site: LocalSite, tmp_path: Path) -> None:
    site.route("app.test", "/refs.html", lambda request: Response(PAGE))
    with PolicyStore(tmp_path / "p.db") as store:
        store.put([
            Policy(id="ORG-ADMIN", category="boundary", risk_level="high", description="Do not open /admin.",
                   rules=[{"url_deny": "/admin"}]),
            Policy(id="ORG-PAY", category="consent", risk_level="medium", description="Ask before paying.",
                   rules=[{"consent": {"match": ["pay"]}}]),
        ], cause="import")  # fmt: skip
        answers = iter([False, True])
        guard = Guard(policies=store, references=store, goal="Look at the page.",
                      approver=lambda verdict, step: next(answers))  # fmt: skip
        page = guard.wrap(await context.new_page())
        await page.goto("http://app.test/refs.html")
        with pytest.raises(ActionBlocked):
            await page.get_by_role("link", name="Admin area").click()
        with pytest.raises(ApprovalRequired):
            await page.get_by_role("button", name="Pay now").click()  # the approver says no
        await page.get_by_role("button", name="Pay now").click()  # the approver says yes: it runs
        assert await page.title() == "paid"
        filer = guard.references
        guard.close()
        assert (filer.filed, filer.duplicates, filer.errors) == (2, 0, 0)  # the approved ASK is no violation
        admin, pay = store.get("ORG-ADMIN"), store.get("ORG-PAY")
        assert len(admin.references) == 1 and "Admin area" in admin.references[0].text
        assert "Decision: BLOCK" in admin.references[0].text
        assert "Task: Look at the page." in admin.references[0].text
        assert len(pay.references) == 1 and "Decision: ASK" in pay.references[0].text
        await page.close()
