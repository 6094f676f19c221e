// pagewarden console. Everything shown here that came from a supervised page (titles, URLs,
// element text, the agent's reasoning) is hostile: it is only ever inserted with
// textContent, never as HTML, and never used as a link. The CSP forbids inline script and,
// with Trusted Types, any HTML string sink, so a slip would throw instead of running.
"use strict";

(() => {
  const params = new URLSearchParams(location.search);
  const token = params.get("token") || "";
  let watching = params.get("session") || null;
  // the watcher's filter (one value per name here; the API takes several): which sessions it
  // lists, and which sessions' approvals are routed to it
  const filter = { agent: params.get("agent") || "", host: params.get("host") || "", status: params.get("status") || "" };
  const inbox = new Map(); // approval id -> {session, agent, host, goal, approval}
  let role = "view";
  let source = null;
  let detail = null; // {summary, steps, approvals, network, orders, frame}
  const sessions = new Map();
  const stepIndexes = new Set();
  let frameInfo = null; // {n, viewport}
  let frameLoading = false;
  let frameWanted = null;

  const $ = (id) => document.getElementById(id);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function clip(text, n) {
    const s = text === null || text === undefined ? "" : String(text);
    return s.length > n ? s.slice(0, n - 1) + "…" : s;
  }

  function withFilter(q) {
    for (const [name, value] of Object.entries(filter)) if (value) q.set(name, value);
    return q;
  }

  function sessionUrl(id) {
    const q = withFilter(new URLSearchParams({ token }));
    if (id) q.set("session", id);
    return "?" + q.toString();
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
      redirect: "error",
    });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) throw new Error((data && data.error) || "HTTP " + response.status);
    return data;
  }

  // -- the stream --------------------------------------------------------------------
  function connect() {
    if (source) source.close();
    const q = withFilter(new URLSearchParams({ token }));
    if (watching) q.set("watch", watching);
    source = new EventSource("/api/stream?" + q.toString());
    source.addEventListener("open", () => { $("conn").textContent = "live"; $("conn").className = "conn ok"; });
    source.addEventListener("error", () => { $("conn").textContent = "reconnecting…"; $("conn").className = "conn bad"; });
    source.addEventListener("hello", (e) => onHello(JSON.parse(e.data)));
    source.addEventListener("summary", (e) => onSummary(JSON.parse(e.data)));
    source.addEventListener("event", (e) => onEvent(JSON.parse(e.data)));
    source.addEventListener("frame", (e) => onFrame(JSON.parse(e.data)));
    source.addEventListener("drop", (e) => { sessions.delete(JSON.parse(e.data).id); renderList(); });
    source.addEventListener("facets", (e) => renderFacets(JSON.parse(e.data)));
    source.addEventListener("approval", (e) => onApproval(JSON.parse(e.data)));
  }

  function onHello(data) {
    role = data.role === "full" ? "full" : "view";
    document.body.dataset.role = role;
    $("role").textContent = role === "full" ? "supervisor" : "read-only";
    sessions.clear();
    for (const s of data.sessions || []) sessions.set(s.id, s);
    renderList();
    renderFacets(data.facets || {});
    inbox.clear();
    for (const a of data.approvals || []) inbox.set(a.approval.id, a);
    renderInbox();
    detail = data.detail || null;
    stepIndexes.clear();
    $("steps").replaceChildren();
    $("network").replaceChildren();
    $("background-count").textContent = "0";
    $("approvals").replaceChildren();
    if (!detail) { showDetail(false); return; }
    showDetail(true);
    for (const step of detail.steps || []) addStep(step);
    for (const n of detail.network || []) addNetwork(n);
    renderApprovals();
    renderSummary(detail.summary);
    if (detail.frame) onFrame({ session: detail.summary.id, n: detail.frame.n, viewport: detail.frame.viewport });
  }

  function onSummary(summary) {
    sessions.set(summary.id, summary);
    renderList();
    if (detail && summary.id === detail.summary.id) {
      detail.summary = summary;
      renderSummary(summary);
    }
  }

  function onEvent(event) {
    if (!detail || event.session !== detail.summary.id) return;
    const data = event.data || {};
    if (event.kind === "step") addStep(data);
    else if (event.kind === "approval") {
      const list = detail.approvals.filter((a) => a.id !== data.id);
      list.push(data);
      detail.approvals = list.slice(-50);
      renderApprovals();
    } else if (event.kind === "network") addNetwork({ ts: event.ts, ...data });
    else if (event.kind === "order") showOrder(data);
  }

  // -- session list ------------------------------------------------------------------
  function statusText(s) {
    let text = s.status.replace("_", " ");
    if (s.holding && (s.status === "paused" || s.status === "taken_over")) text += " · agent waiting";
    return text;
  }

  function renderList() {
    const list = $("session-list");
    const items = [];
    for (const s of sessions.values()) {
      const li = el("li", "session" + (s.id === watching ? " selected" : ""));
      li.dataset.session = s.id;
      const button = el("button", "pick");
      button.type = "button";
      button.append(el("span", "goal page-text", clip(s.goal || "(no goal)", 120)));
      const who = el("span", "meta");
      who.append(el("span", "agent page-text", clip(s.agent || "(unnamed agent)", 60)));
      if (s.host) who.append(el("span", "host page-text", clip(s.host, 60)));
      button.append(who);
      const meta = el("span", "meta");
      meta.append(el("span", "status s-" + s.status, statusText(s)));
      meta.append(el("span", "count", s.steps + (s.steps === 1 ? " step" : " steps")));
      for (const [decision, count] of Object.entries(s.decisions || {})) {
        meta.append(el("span", "dec d-" + decision, decision + " " + count));
      }
      if (s.pending) meta.append(el("span", "pending", s.pending + " to approve"));
      if (s.remote) meta.append(el("span", "muted", "pid " + s.pid));
      button.append(meta);
      button.append(el("span", "url page-text", clip(s.url, 140)));
      button.addEventListener("click", () => select(s.id));
      li.append(button);
      items.push(li);
    }
    list.replaceChildren(...items);
    $("no-sessions").hidden = items.length > 0;
  }

  function select(id) {
    watching = id;
    history.replaceState(null, "", sessionUrl(id));
    frameInfo = null;
    $("frame").removeAttribute("src");
    $("no-frame").hidden = false;
    connect();
  }

  // -- one session -------------------------------------------------------------------
  function showDetail(on) {
    $("detail").hidden = !on;
    $("empty").hidden = on;
  }

  function renderSummary(s) {
    $("d-id").textContent = s.id;
    $("d-agent").textContent = s.agent || "(unnamed agent)";
    $("d-host").textContent = s.host || "";
    const status = $("d-status");
    status.textContent = statusText(s);
    status.className = "status s-" + s.status;
    status.dataset.status = s.status;
    status.dataset.holding = s.holding ? "yes" : "no";
    $("d-reason").textContent = s.reason || "";
    $("d-goal").textContent = s.goal || "(no goal)";
    $("d-url").textContent = (s.title ? "“" + clip(s.title, 200) + "” " : "") + (s.url || "");
    $("d-report").href = "/sessions/" + encodeURIComponent(s.id) + "/report?token=" + encodeURIComponent(token);
    const open = s.status !== "stopped" && s.status !== "closed";
    $("btn-pause").disabled = !(open && s.status === "running");
    $("btn-resume").disabled = !(open && s.status === "paused");
    $("btn-takeover").disabled = !(open && (s.status === "running" || s.status === "paused"));
    $("btn-handback").disabled = !(open && s.status === "taken_over");
    $("btn-stop").disabled = !open;
    $("goal-edit").disabled = !open;
    const mine = role === "full" && s.status === "taken_over";
    $("takeover").hidden = !mine;
    for (const b of $("takeover").querySelectorAll("button, input")) b.disabled = !(mine && s.holding);
    $("frame").classList.toggle("clickable", mine && s.holding);
  }

  function addStep(step) {
    // the same step may come in the opening state and on the stream: show it once
    const key = [step.ts, step.index, (step.action || {}).kind, (step.action || {}).selector].join("|");
    if (stepIndexes.has(key)) return;
    stepIndexes.add(key);
    const li = el("li", "step k-" + (step.decision || "unknown"));
    li.dataset.index = step.index;
    li.dataset.decision = step.decision || "";
    const head = el("div", "step-head");
    head.append(el("span", "idx", "#" + step.index));
    head.append(el("span", "dec d-" + step.decision, step.decision + (step.approved_by ? " · approved by " + step.approved_by : "")));
    const a = step.action || {};
    head.append(el("span", "action page-text", [a.kind, a.selector, a.value].filter((v) => v).map((v) => clip(v, 160)).join(" ")));
    for (const p of step.policies || []) head.append(el("span", "policy", p));
    li.append(head);
    if (step.target) {
      const t = step.target;
      li.append(el("div", "target page-text", "on " + [t.tag, t.role, clip(t.name || t.text, 160)].filter((v) => v).join(" · ") + (t.href ? " → " + clip(t.href, 200) : "")));
    }
    li.append(el("div", "url page-text", (step.title ? "“" + clip(step.title, 200) + "” " : "") + (step.url || "")));
    if (step.reasoning) li.append(el("div", "reasoning page-text", "reasoning: " + clip(step.reasoning, 600)));
    if (step.explanation && step.decision !== "allow") li.append(el("div", "explanation page-text", step.explanation));
    const p = step.prediction;
    if (p) {
      const parts = [];
      if (p.consequence && p.consequence !== "none") parts.push(p.consequence);
      if (p.navigation && p.navigation.url) parts.push("navigates to " + clip(p.navigation.url, 200));
      if (p.submission && p.submission.url) parts.push("submits to " + clip(p.submission.url, 200));
      if (p.semantic_delta) parts.push(clip(p.semantic_delta, 300));
      if (parts.length) li.append(el("div", "prediction page-text", "world model: " + parts.join("; ")));
    }
    const timings = Object.entries(step.timings || {}).map(([k, v]) => k + " " + Number(v).toFixed(1) + " ms");
    if (timings.length) li.append(el("div", "timings muted", timings.join(" · ")));
    $("steps").prepend(li);
    while ($("steps").children.length > 300) $("steps").lastChild.remove();
  }

  function addNetwork(n) {
    const parts = [];
    for (const key of ["action", "decision", "method", "host", "url", "reason", "rule", "policy_id"]) {
      if (n[key] !== undefined && n[key] !== null && n[key] !== "") parts.push(key + ": " + clip(n[key], 300));
    }
    if (!parts.length) parts.push(clip(JSON.stringify(n), 600));
    // Chromium's own background traffic (updates, accounts, safe browsing) carries no session
    // token: the proxy refuses it as no_session. It is not the agent's: hidden unless asked for.
    const background = n.rule === "no_session";
    const li = el("li", "network page-text" + (background ? " background" : ""), parts.join(" · "));
    $("network").prepend(li);
    while ($("network").children.length > 300) $("network").lastChild.remove();
    $("background-count").textContent = String($("network").querySelectorAll("li.background").length);
  }

  $("show-background").addEventListener("change", (event) => {
    $("network").classList.toggle("hide-background", !event.currentTarget.checked);
  });

  function renderApprovals() {
    const box = $("approvals");
    const cards = [];
    const now = Date.now() / 1000;
    const recent = detail.approvals.slice().reverse();
    for (const a of recent) {
      const pending = a.status === "pending";
      if (!pending && cards.length >= 4) continue;
      const card = el("div", "approval a-" + a.status);
      card.dataset.approval = a.id;
      card.dataset.status = a.status;
      const step = a.step || {};
      const action = step.action || {};
      const verdict = a.verdict || {};
      card.append(el("div", "a-title", pending ? "The agent asks to:" : "Asked (" + a.status + (a.by ? ", " + a.by : "") + "):"));
      card.append(el("div", "a-action page-text", [action.kind, action.selector, action.value].filter((v) => v).map((v) => clip(v, 200)).join(" ")));
      if (step.target) card.append(el("div", "page-text", "on " + clip(step.target.name || step.target.text || step.target.tag, 200) + (step.target.href ? " → " + clip(step.target.href, 200) : "")));
      card.append(el("div", "page-text url", "at " + clip(step.url, 300)));
      card.append(el("div", "a-why page-text", "why asked: " + clip(verdict.explanation, 600)));
      if (step.reasoning) card.append(el("div", "page-text reasoning", "agent's reasoning (page-influenced, not an instruction to you): " + clip(step.reasoning, 600)));
      if (pending) {
        const left = Math.max(0, Math.round((a.expires_at || now) - now));
        const timer = el("div", "a-timer muted", "denied automatically in " + left + " s");
        timer.dataset.expires = a.expires_at;
        card.append(timer);
        if (role === "full") {
          const row = el("div", "row");
          const yes = el("button", "approve", "Approve");
          const kind = el("button", "approve-kind", "Approve this kind for this session");
          const no = el("button", "deny danger", "Deny");
          for (const b of [yes, kind, no]) b.type = "button";
          yes.addEventListener("click", () => decide(a.id, true, false, card));
          kind.addEventListener("click", () => decide(a.id, true, true, card));
          no.addEventListener("click", () => decide(a.id, false, false, card));
          row.append(yes, kind, no, el("span", "error"));
          card.append(row);
        }
      }
      cards.push(card);
    }
    box.replaceChildren(...cards);
  }

  async function decide(id, approved, remember, card, session) {
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    try {
      await post("/api/sessions/" + encodeURIComponent(session || watching) + "/approvals/" + encodeURIComponent(id), { approved, remember });
    } catch (err) {
      card.querySelector(".error").textContent = err.message;
    }
  }

  // -- filters and the approvals routed to this watcher ---------------------------------
  function fillSelect(select, values, current) {
    const options = [el("option", null, "all")];
    options[0].value = "";
    for (const v of new Set([...(values || []), ...(current ? [current] : [])])) {
      const option = el("option", null, clip(v, 80));
      option.value = v;
      options.push(option);
    }
    select.replaceChildren(...options);
    select.value = current;
  }

  function renderFacets(facets) {
    fillSelect($("f-agent"), facets.agents, filter.agent);
    fillSelect($("f-host"), facets.hosts, filter.host);
    $("f-status").value = filter.status;
  }

  for (const name of ["agent", "host", "status"]) {
    $("f-" + name).addEventListener("change", (event) => {
      filter[name] = event.currentTarget.value;
      history.replaceState(null, "", sessionUrl(watching));
      connect();
    });
  }

  function onApproval(view) {
    inbox.set(view.approval.id, view);
    renderInbox();
  }

  function renderInbox() {
    const views = [...inbox.values()];
    const pending = views.filter((v) => v.approval.status === "pending");
    const done = views.filter((v) => v.approval.status !== "pending").slice(-5);
    for (const v of views) if (v.approval.status !== "pending" && !done.includes(v)) inbox.delete(v.approval.id);
    const items = [];
    const answered = [];
    for (const view of [...pending, ...done.reverse()]) {
      const a = view.approval;
      const isPending = a.status === "pending";
      const card = el("li", "routed a-" + a.status);
      card.dataset.approval = a.id;
      card.dataset.session = view.session;
      card.dataset.status = a.status;
      const who = el("div", "meta");
      who.append(el("span", "agent page-text", clip(view.agent || "(unnamed agent)", 60)));
      if (view.host) who.append(el("span", "host page-text", clip(view.host, 60)));
      card.append(who);
      const step = a.step || {};
      const action = step.action || {};
      card.append(el("div", "a-title", isPending ? "asks to:" : a.status + (a.by ? " (" + a.by + ")" : "") + ":"));
      card.append(el("div", "a-action page-text", [action.kind, action.selector, action.value].filter((v) => v).map((v) => clip(v, 120)).join(" ")));
      if (step.target) card.append(el("div", "page-text", "on " + clip(step.target.name || step.target.text || step.target.tag, 120)));
      card.append(el("div", "page-text url", "at " + clip(step.url, 200)));
      card.append(el("div", "a-why page-text", "why asked: " + clip((a.verdict || {}).explanation, 300)));
      const open = el("button", "open", "Open session");
      open.type = "button";
      open.addEventListener("click", () => select(view.session));
      const row = el("div", "row");
      row.append(open);
      if (isPending && role === "full") {
        const yes = el("button", "approve", "Approve");
        const no = el("button", "deny danger", "Deny");
        for (const b of [yes, no]) b.type = "button";
        yes.addEventListener("click", () => decide(a.id, true, false, card, view.session));
        no.addEventListener("click", () => decide(a.id, false, false, card, view.session));
        row.append(yes, no);
      }
      row.append(el("span", "error"));
      card.append(row);
      (isPending ? items : answered).push(card);
    }
    // "Waiting for approval" holds what waits; an answered one moves to "Recently answered"
    $("inbox").replaceChildren(...items);
    $("no-inbox").hidden = items.length > 0;
    $("answered").replaceChildren(...answered);
    $("answered-box").hidden = answered.length === 0;
  }

  function tick() {
    const now = Date.now() / 1000;
    for (const timer of document.querySelectorAll(".a-timer")) {
      const left = Math.max(0, Math.round(Number(timer.dataset.expires) - now));
      timer.textContent = "denied automatically in " + left + " s";
    }
  }

  // -- live view ---------------------------------------------------------------------
  function onFrame(info) {
    if (!detail || info.session !== detail.summary.id) return;
    frameWanted = info;
    if (!frameLoading) loadFrame();
  }

  function loadFrame() {
    const info = frameWanted;
    if (!info) return;
    frameWanted = null;
    frameLoading = true;
    const img = $("frame");
    img.onload = () => { frameLoading = false; frameInfo = info; $("no-frame").hidden = true; img.dataset.n = info.n; loadFrame(); };
    img.onerror = () => { frameLoading = false; loadFrame(); };
    img.src = "/api/sessions/" + encodeURIComponent(info.session) + "/frame.jpg?token=" + encodeURIComponent(token) + "&n=" + info.n;
  }

  $("frame").addEventListener("click", (event) => {
    const img = event.currentTarget;
    if (!img.classList.contains("clickable") || !frameInfo) return;
    const rect = img.getBoundingClientRect();
    const width = frameInfo.viewport ? frameInfo.viewport[0] : img.naturalWidth;
    const height = frameInfo.viewport ? frameInfo.viewport[1] : img.naturalHeight;
    const x = ((event.clientX - rect.left) / rect.width) * width;
    const y = ((event.clientY - rect.top) / rect.height) * height;
    order("click", { x: Math.round(x), y: Math.round(y) });
  });

  // -- controls ----------------------------------------------------------------------
  async function control(action) {
    $("control-error").textContent = "";
    try { await post("/api/sessions/" + encodeURIComponent(watching) + "/control", { action }); }
    catch (err) { $("control-error").textContent = err.message; }
  }

  async function order(op, args) {
    $("order-result").textContent = op + "…";
    try { await post("/api/sessions/" + encodeURIComponent(watching) + "/orders", { op, args: args || {} }); }
    catch (err) { $("order-result").textContent = op + ": " + err.message; }
  }

  function showOrder(data) {
    const text = data.op + ": " + data.status + (data.error ? " — " + clip(data.error, 400) : "");
    const node = $("order-result");
    node.textContent = text;
    node.dataset.status = data.status;
  }

  $("btn-pause").addEventListener("click", () => control("pause"));
  $("btn-resume").addEventListener("click", () => control("resume"));
  $("btn-takeover").addEventListener("click", () => control("takeover"));
  $("btn-handback").addEventListener("click", () => control("handback"));
  $("btn-stop").addEventListener("click", () => control("stop"));
  $("goal-edit").addEventListener("click", () => {
    $("goal-input").value = detail ? detail.summary.goal || "" : "";
    $("goal-editor").hidden = false;
    $("goal-input").focus();
  });
  $("goal-cancel").addEventListener("click", () => { $("goal-editor").hidden = true; });
  $("goal-save").addEventListener("click", async () => {
    try {
      await post("/api/sessions/" + encodeURIComponent(watching) + "/goal", { goal: $("goal-input").value });
      $("goal-editor").hidden = true;
    } catch (err) { $("control-error").textContent = err.message; }
  });
  $("to-type").addEventListener("click", () => order("type", { text: $("to-text").value }));
  $("to-enter").addEventListener("click", () => order("press", { key: "Enter" }));
  $("to-tab").addEventListener("click", () => order("press", { key: "Tab" }));
  $("to-backspace").addEventListener("click", () => order("press", { key: "Backspace" }));
  $("to-goto").addEventListener("click", () => order("goto", { url: $("to-url").value }));
  $("to-back").addEventListener("click", () => order("back"));
  $("to-reload").addEventListener("click", () => order("reload"));
  $("to-up").addEventListener("click", () => order("scroll", { dy: -400 }));
  $("to-down").addEventListener("click", () => order("scroll", { dy: 400 }));
  $("to-frame").addEventListener("click", () => order("frame"));

  setInterval(tick, 1000);
  connect();
})();
