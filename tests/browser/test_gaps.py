"""The content-gap report in a real browser: staff open /gaps, follow a group to the audit view; nobody else can.

The server is the real app (real model, real Chroma index of content/) behind
an identity header, with a log seeded with refusals and a rated-down answer:
two topics asked several ways, one question asked once, and an answer given
to tenant-acme from Acme-only sections, which staff outside that group must
never see counted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.gap_seed import refusal, seed
from tests.integration.conftest import serve

from .a11y import problems
from .conftest import _app

pytestmark = [pytest.mark.integration, pytest.mark.browser]

NOW = time.time()
SSO = ["Can I sign in with Okta through SCIM provisioning on the Free plan?", "Does the Free plan have SCIM provisioning with Okta?",
       "Is SCIM user provisioning from Okta available on Free?"]
TERRAFORM = ["Is there a Terraform provider for Ferrydeck?", "Can I manage Ferrydeck endpoints with Terraform?"]
ONCE = "My card 4111 1111 1111 1111 was charged twice, what do I do? jane@example.com"
ACME = "When are the Acme dedicated cluster maintenance windows?"


@pytest.fixture(scope="module")
def gaps_url(content_index, real_embedder, tmp_path_factory) -> Iterator[dict[str, object]]:
    from answer.generate import ExtractiveGenerator
    from answer.log.sqlite import SQLiteAnswerLog

    data = tmp_path_factory.mktemp("web-gaps")
    public = {c.id: c for c in content_index.chunks(groups=["public"])}
    acme = [c for c in content_index.chunks(groups=["tenant-acme"]) if "tenant-acme" in c.access][:2]
    roles = [c for c in public.values() if c.doc_id == "doc:guides/team-and-roles"][:2]
    answers = [refusal(q, created=NOW - 600 + 60 * i, chunks=roles) for i, q in enumerate(SSO)]
    answers += [refusal(q, created=NOW - 300 + 60 * i, chunks=list(public.values())[:1]) for i, q in enumerate(TERRAFORM)]
    answers += [refusal(ONCE, created=NOW - 100, state="answered", chunks=list(public.values())[1:2])]
    answers += [refusal(ACME, created=NOW - 50, chunks=acme, groups=["tenant-acme"])]
    audit = SQLiteAnswerLog(data / "answers.sqlite3")
    ids = seed(audit, answers)
    audit.add_feedback(ids[5], "down", "Nothing about double charges", frozenset({"public"}))
    app = _app(content_index, real_embedder, data, ExtractiveGenerator(real_embedder), identity_header="X-Groups")
    with serve(app) as url:
        yield {"url": url, "ids": ids, "acme": acme}


def test_staff_see_the_gaps_grouped_largest_first_and_follow_one_to_the_audit_view(browser, gaps_url, shots):
    url, ids = gaps_url["url"], gaps_url["ids"]
    context = browser.new_context(viewport={"width": 1280, "height": 900}, extra_http_headers={"X-Groups": "staff"})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(str(url) + "/answers")
        page.locator("header nav a", has_text="Content gaps").click()
        page.wait_for_url("**/gaps")
        assert page.locator("h1").inner_text() == "Content gaps"
        groups = page.locator("article.gap")
        assert groups.count() == 2
        assert "3 answers" in groups.nth(0).locator("h2").inner_text() and groups.nth(0).locator("h2").inner_text().split(" 3 answers")[0] in SSO
        assert "2 answers" in groups.nth(1).locator("h2").inner_text()
        assert groups.nth(0).locator(".gap-examples li").count() == 3
        section = groups.nth(0).locator(".gap-sections a").first
        assert "#" in (section.get_attribute("href") or "") and "Team and roles" in section.inner_text()
        once = page.locator("table.answers")
        assert "[number]" in once.inner_text() and "[email]" in once.inner_text()
        body = page.locator("main").inner_text()
        assert "4111" not in body and "jane@" not in body and "Acme" not in body and ACME not in body
        assert problems(page) == [], problems(page)
        page.screenshot(path=str(shots / "40-content-gaps.png"), full_page=True)

        groups.nth(0).locator("a.audit-link").click()
        page.wait_for_url("**/answers?ids=*")
        listed = {a.get_attribute("href") for a in page.locator("table.answers a").all()}
        assert listed == {f"/answers/{i}" for i in ids[:3]}
        page.screenshot(path=str(shots / "41-content-gap-answers.png"))
    finally:
        context.close()


def test_a_visitor_is_refused_the_gaps_page_as_the_audit_view_refuses_them(browser, gaps_url):
    context = browser.new_context(extra_http_headers={"X-Groups": "support"})
    try:
        page = context.new_page()
        for path in ("/gaps", "/answers"):
            response = page.goto(str(gaps_url["url"]) + path)
            assert response is not None and response.status == 403
            assert "for support staff" in page.locator("main").inner_text()
        assert SSO[0] not in page.content()
    finally:
        context.close()
