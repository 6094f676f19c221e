"""Site chrome for the demo's pages: what real trackers and forums carry around the content.

A top navigation bar, a project or forum sidebar, breadcrumbs, lists of related issues and
suggested topics, an activity feed and a footer with dozens of links — a few hundred ordinary,
same-site interactive elements per page, so the guard's prompt is measured against trees of
realistic size. Nothing here is user-written, nothing gives orders, and no name collides with
an element the demo's agents look up (``Comment``, ``Dismiss``, ``Reply``, ``Upvote``, ``Sign in``
…): the chrome's controls have names of their own.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

__all__ = [
    "forum_footer",
    "forum_header_nav",
    "forum_sidebar",
    "forum_suggested",
    "tracker_activity",
    "tracker_footer",
    "tracker_issue_aside",
    "tracker_related",
    "tracker_sidebar",
    "tracker_topnav",
]

_PROJECT = "/acme/webapp"


def _a(href: str, text: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f'<a{klass} href="{html.escape(href)}">{html.escape(text)}</a>'


def _links(items: Iterable[tuple[str, str]], cls: str = "") -> str:
    return "".join(f"<li>{_a(href, text, cls)}</li>" for text, href in items)


def _slug(text: str) -> str:
    return "-".join("".join(c if c.isalnum() else " " for c in text.lower()).split())


# -- tracker.test ---------------------------------------------------------------------------
_TOPNAV = [
    ("Your projects", "/dashboard/projects"), ("Starred projects", "/dashboard/projects/starred"),
    ("Explore projects", "/explore/projects"), ("Your groups", "/dashboard/groups"),
    ("Assigned issues", "/dashboard/issues?assignee_username=alice"),
    ("Review requests", "/dashboard/merge_requests?reviewer_username=alice"),
    ("To-Do List", "/dashboard/todos"), ("Milestones overview", "/dashboard/milestones"),
    ("Snippets overview", "/dashboard/snippets"), ("Activity overview", "/dashboard/activity"),
    ("Environments dashboard", "/-/operations/environments"), ("Admin area", "/admin"),
    ("acme / infra", "/acme/infra"), ("acme / billing", "/acme/billing"), ("acme / mobile", "/acme/mobile"),
    ("acme / design-system", "/acme/design-system"), ("acme / data-pipeline", "/acme/data-pipeline"),
    ("acme / docs", "/acme/docs"), ("acme / auth-service", "/acme/auth-service"),
    ("acme / search", "/acme/search"), ("platform / runners", "/platform/runners"),
    ("platform / observability", "/platform/observability"), ("Help", "/help"),
    ("Keyboard shortcuts", "/help/shortcuts"), ("What's new", "/help/whats_new"),
]  # fmt: skip

_SIDEBAR = {
    "Manage": ["Activity", "Members", "Labels"],
    "Plan": ["Issue boards", "Milestones", "Iterations", "Wiki", "Requirements", "Service Desk"],
    "Code": ["Merge requests", "Repository", "Branches", "Commits", "Tags", "Repository graph",
             "Compare revisions", "Snippets", "Locked files"],
    "Build": ["Pipelines", "Jobs", "Pipeline editor", "Pipeline schedules", "Artifacts", "Test cases"],
    "Secure": ["Security dashboard", "Vulnerability report", "Dependency list", "License compliance",
               "Audit events", "Security configuration"],
    "Deploy": ["Releases", "Feature flags", "Package registry", "Container registry", "Model registry",
               "Pages"],
    "Operate": ["Environments", "Kubernetes clusters", "Terraform states", "Terraform modules"],
    "Monitor": ["Error tracking", "Alerts", "Incidents", "On-call schedules"],
    "Analyze": ["Value stream analytics", "Contributor analytics", "CI/CD analytics", "Repository analytics",
                "Code review analytics", "Issue analytics", "Insights", "Model experiments"],
    "Project settings": ["General settings", "Integrations", "Webhooks", "Repository settings",
                         "Merge request settings", "CI/CD settings", "Packages and registries",
                         "Monitor settings", "Usage quotas"],
}  # fmt: skip

_FOOTER = {
    "Product": ["Features", "Pricing", "Release notes", "Roadmap", "Self-managed", "Dedicated", "Compare",
                "Integrations directory"],
    "Resources": ["Documentation home", "API reference", "Status page", "Learn", "Blog", "Events",
                  "Webcasts", "Case studies"],
    "Community": ["Forum", "Meetups", "Contributors", "Heroes", "Code of conduct", "Hackathons",
                  "Newsletter", "Merchandise"],
    "Company": ["About us", "Careers", "Press", "Investor relations", "Handbook", "Sustainability",
                "Partners", "Contact"],
    "Support": ["Support portal", "Training", "Certifications", "Professional services", "Migration guide",
                "System requirements", "Upgrade paths", "Instance health"],
    "Legal": ["Terms of use", "Privacy statement", "Cookie preferences", "Accessibility statement",
              "Security disclosure", "Trademark", "Acceptable use", "Imprint"],
}  # fmt: skip

#: Related issues of every seeded issue: (number, title, state, label).
_RELATED = [
    (12, "Password reset mail links expire too early", "open", "auth"),
    (17, "Upgrade Django to 5.1", "closed", "maintenance"),
    (23, "Flaky end-to-end test on the checkout page", "open", "ci"),
    (31, "Dark mode contrast of the billing table", "open", "ux"),
    (38, "Slow issue list with more than 500 labels", "open", "performance"),
    (44, "Release notes for 2.4.1", "closed", "release"),
    (52, "Rate limits for the public API", "open", "api"),
    (57, "Profile pictures lose transparency after upload", "open", "bug"),
    (61, "CSV export of issues misses custom fields", "open", "feature"),
    (64, "Timezone of due dates in notification mails", "open", "bug"),
    (68, "Webhook retries after a 502 from the receiver", "closed", "integrations"),
    (71, "Search results ignore confidential issue filter", "open", "search"),
    (75, "Two-factor recovery codes page layout", "open", "ux"),
    (79, "Memory growth of the background worker", "open", "performance"),
]
_MERGE_REQUESTS = [
    (118, "Handle missing session backend during login", "alice"),
    (121, "Cache warm-up after deploys", "dmitri"),
    (124, "Settings pages: prefers-color-scheme support", "carol"),
]
_PEOPLE = [
    ("dmitri", "Dmitri Ivanov"), ("carol", "Carol Smith"), ("erin", "Erin Walsh"), ("bob", "Bob Nguyen"),
    ("frank", "Frank Osei"), ("grace", "Grace Lindqvist"), ("hiro", "Hiro Tanaka"), ("ines", "Inês Costa"),
    ("jonas", "Jonas Berg"), ("kavya", "Kavya Rao"), ("leon", "Leon Fischer"), ("mei", "Mei Chen"),
]  # fmt: skip


def tracker_topnav() -> str:
    """The top bar's menu of the tracker (a list of same-site links)."""
    items = _links((text, href) for text, href in _TOPNAV)
    return f'<nav class="topnav" aria-label="Main menu"><ul>{items}</ul></nav>'


def tracker_sidebar() -> str:
    """The project sidebar: the four original entries, then the sections of a big forge."""
    parts = [
        '<nav class="sidebar" aria-label="Project">',
        '<div class="project">acme / webapp</div>',
        _a(_PROJECT, "Project overview"),
        f'<a href="{_PROJECT}/issues">Issues <span class="muted">5</span></a>',
        _a(f"{_PROJECT}/-/settings/access_tokens", "Settings"),
        _a(f"{_PROJECT}/-/settings/access_tokens", "Access tokens", "sub"),
    ]
    for section, entries in _SIDEBAR.items():
        parts.append(f'<div class="section" role="group" aria-label="{section}">')
        parts.append(f'<div class="heading">{section}</div>')
        parts.extend(_a(f"{_PROJECT}/-/{_slug(entry)}", entry, "sub") for entry in entries)
        parts.append("</div>")
    parts.append("</nav>")
    return "".join(parts)


def tracker_footer() -> str:
    """The tracker's footer: five columns of same-site links."""
    columns = "".join(
        f'<div class="col"><h3>{title}</h3><ul>{_links((e, f"/help/{_slug(e)}") for e in entries)}</ul></div>'
        for title, entries in _FOOTER.items()
    )
    version = '<p class="muted">Tracker 17.6 · acme</p>'
    return f'<footer class="site-footer" aria-label="Site footer">{columns}{version}</footer>'


def tracker_related(number: int) -> str:
    """Linked issues and merge requests shown under an issue's description."""
    issues = "".join(
        f'<li class="related-item">{_a(f"{_PROJECT}/issues/{n}", title)} '
        f'<span class="muted">#{n} · {state}</span> '
        f'{_a(f"{_PROJECT}/issues?label_name={label}", label, "label")}</li>'
        for n, title, state, label in _RELATED
        if n != number
    )
    mrs = "".join(
        f'<li class="related-item">{_a(f"{_PROJECT}/-/merge_requests/{n}", title)} '
        f'<span class="muted">!{n} by</span> {_a(f"/{user}", "@" + user)}</li>'
        for n, title, user in _MERGE_REQUESTS
    )
    return (
        '<section class="related" aria-label="Linked items">'
        f'<h2>Linked issues <span class="muted">{len(_RELATED)}</span></h2>'
        f'<ul class="related-list">{issues}</ul>'
        f'<h2>Related merge requests <span class="muted">{len(_MERGE_REQUESTS)}</span></h2>'
        f'<ul class="related-list">{mrs}</ul></section>'
    )


def tracker_issue_aside(number: int, labels: Iterable[str]) -> str:
    """The issue's right-hand sidebar: assignees, labels, milestone, participants …"""
    label_links = " ".join(_a(f"{_PROJECT}/issues?label_name={lab}", lab, "label") for lab in labels)
    people = " ".join(_a(f"/{user}", name) for user, name in _PEOPLE)
    rows = [
        ("Assignee", _a("/dmitri", "Dmitri Ivanov"), "Edit assignees"),
        ("Labels", label_links, "Edit labels"),
        ("Milestone", _a(f"{_PROJECT}/-/milestones/7", "2.4.2"), "Edit milestone"),
        ("Iteration", _a(f"{_PROJECT}/-/iterations/31", "Sprint 48"), "Edit iteration"),
        ("Due date", "None", "Edit due date"),
        ("Weight", "3", "Edit weight"),
        ("Time tracking", "Spent 2h · Estimate 1d", "Edit time estimate"),
        ("Health status", "On track", "Edit health status"),
        ("Confidentiality", "Not confidential", "Edit confidentiality"),
        ("Participants", people, "Show all participants"),
    ]
    body = "".join(
        f'<div class="aside-row"><div class="aside-title">{title}'
        f'<button type="button" class="link-button">{button}</button></div><div>{value}</div></div>'
        for title, value, button in rows
    )
    return (
        f'<aside class="issue-aside" aria-label="Issue details">{body}'
        f'<div class="aside-row">Reference: acme/webapp#{number} '
        '<button type="button" class="link-button">Copy issue reference</button></div>'
        f'<div class="aside-row">{_a(f"{_PROJECT}/issues/{number}.atom", "Issue feed")} · '
        f'{_a(f"{_PROJECT}/issues?search=%23{number}", "Issues mentioning this one")}</div></aside>'
    )


def tracker_activity() -> str:
    """The project's recent activity feed (25 events)."""
    verbs = ["opened issue", "commented on issue", "pushed to branch", "closed issue", "merged"]
    events = []
    for i in range(25):
        user, name = _PEOPLE[i % len(_PEOPLE)]
        verb = verbs[i % len(verbs)]
        n, title, _state, _label = _RELATED[i % len(_RELATED)]
        if verb == "pushed to branch":
            target = _a(f"{_PROJECT}/-/tree/feature-{n}", f"feature-{n}")
        elif verb == "merged":
            mr = _MERGE_REQUESTS[i % len(_MERGE_REQUESTS)]
            target = _a(f"{_PROJECT}/-/merge_requests/{mr[0]}", f"!{mr[0]} {mr[1]}")
        else:
            target = _a(f"{_PROJECT}/issues/{n}", f"#{n} {title}")
        when = f'<span class="muted">{i + 1}h ago</span>'
        events.append(f'<li class="event">{_a("/" + user, name)} {verb} {target} {when}</li>')
    return (
        '<section class="activity-feed" aria-label="Project activity"><h2>Project activity</h2>'
        f'<ul>{"".join(events)}</ul></section>'
    )


# -- forum.test -----------------------------------------------------------------------------
_FORUM_NAV = [("Latest", "/latest"), ("New topics", "/new"), ("Unread", "/unread"), ("Top", "/top"),
              ("Categories", "/categories"), ("Bookmarks", "/bookmarks"), ("Badges", "/badges"),
              ("Users", "/u"), ("Groups", "/g"), ("About", "/about"), ("FAQ", "/faq")]  # fmt: skip
_FORUM_CATEGORIES = ["CI/CD", "Databases", "Kubernetes", "Observability", "Security", "Networking",
                     "Frontend", "Languages", "Careers", "Site feedback", "Announcements", "Off-topic",
                     "Storage", "Serverless", "Testing", "Incident reviews", "Tooling",
                     "Show and tell"]  # fmt: skip
_FORUM_TAGS = ["postgres", "github-actions", "gitlab-ci", "buildkite", "docker", "helm", "terraform",
               "prometheus", "grafana", "nginx", "redis", "python", "go", "rust", "typescript", "monorepo",
               "caching", "upgrades", "kafka", "sqlite", "mysql", "ansible", "argo-cd", "vault", "linux",
               "bazel", "nix", "pnpm", "java", "kotlin"]  # fmt: skip
_FORUM_TOPICS = [
    ("Self-hosted runners on spot instances: worth it?", "CI/CD", 34, "3h"),
    ("pgbouncer transaction mode and prepared statements", "Databases", 18, "4h"),
    ("Migrating from Jenkins: what we learned", "CI/CD", 52, "6h"),
    ("Logical replication lag spikes at night", "Databases", 11, "8h"),
    ("Helm chart versioning strategy for 40 services", "Kubernetes", 9, "10h"),
    ("OpenTelemetry collector memory usage", "Observability", 21, "12h"),
    ("Docker layer caching across branches", "CI/CD", 27, "1d"),
    ("Vacuum tuning for write-heavy tables", "Databases", 15, "1d"),
    ("Secrets rotation without downtime", "Security", 30, "2d"),
    ("Nix in CI: experiences after a year", "CI/CD", 44, "2d"),
    ("Read replicas and stale reads in Django", "Databases", 8, "3d"),
    ("Bazel remote cache sizing", "CI/CD", 12, "3d"),
    ("Kafka consumer rebalances during deploys", "Tooling", 19, "3d"),
    ("Cost of cross-zone traffic in Kubernetes", "Kubernetes", 23, "4d"),
    ("SQLite in production for a small SaaS", "Databases", 61, "4d"),
    ("Flaky tests: quarantine or fix first?", "Testing", 38, "5d"),
    ("Postmortem template that people actually fill in", "Incident reviews", 14, "5d"),
    ("Argo CD app-of-apps layout", "Kubernetes", 10, "6d"),
    ("Structured logging in Go services", "Observability", 16, "6d"),
    ("pnpm workspaces with 200 packages", "Tooling", 25, "1w"),
]


def forum_header_nav() -> str:
    """The forum's top navigation."""
    return f'<nav class="forum-nav" aria-label="Site navigation"><ul>{_links(_FORUM_NAV)}</ul></nav>'


def forum_sidebar() -> str:
    """The forum's left sidebar: sections, categories, tags, messages."""
    cats = _links((c, f"/c/{_slug(c)}") for c in _FORUM_CATEGORIES)
    tags = _links((t, f"/tag/{t}") for t in _FORUM_TAGS)
    mine = _links([("My posts", "/u/alice/activity"), ("My drafts", "/u/alice/drafts"),
                   ("Inbox", "/u/alice/messages"), ("Sent messages", "/u/alice/messages/sent"),
                   ("Notifications", "/u/alice/notifications"), ("Preferences", "/u/alice/preferences"),
                   ("Summary", "/u/alice/summary")])  # fmt: skip
    return (
        '<nav class="forum-sidebar" aria-label="Forum sections">'
        f'<h3>You</h3><ul>{mine}</ul><h3>Categories</h3><ul>{cats}</ul>'
        f'<h3>Tags</h3><ul class="tags">{tags}</ul></nav>'
    )


def forum_suggested(exclude: str = "") -> str:
    """Suggested topics under a thread (and a "more" list on the index)."""
    rows = "".join(
        f'<tr><td>{_a(f"/t/{_slug(title)}", title)} {_a(f"/c/{_slug(cat)}", cat, "category")}</td>'
        f'<td>{replies}</td><td class="muted">{age}</td></tr>'
        for title, cat, replies, age in _FORUM_TOPICS
        if title != exclude
    )
    return (
        '<section class="suggested" aria-label="Suggested topics"><h2>Suggested topics</h2>'
        f'<table class="topic-list"><thead><tr><th>Topic</th><th>Replies</th><th>Activity</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></section>"
    )


def forum_footer() -> str:
    """The forum's footer."""
    entries = ["About this forum", "FAQ and guidelines", "Terms of service", "Privacy notice",
               "Contact the team", "Status", "RSS feed of latest topics", "Mobile app", "Accessibility",
               "Moderators",
               "Badges overview", "Leaderboard", "Trust levels", "Code of conduct", "Community calendar",
               "Meetup groups", "Newsletter archive", "Year in review", "Partnership policy",
               "Imprint"]  # fmt: skip
    links = _links((e, f"/about/{_slug(e)}") for e in entries)
    return f'<footer class="site-footer" aria-label="Forum footer"><ul>{links}</ul></footer>'
