// The facts of one element: everything the rules and the judge read about it (`facts`), from
// the other modules' answers.

const LANDMARKS = [
  ["main", "main, [role=main]"], ["navigation", "nav, [role=navigation]"],
  ["banner", "header, [role=banner]"], ["contentinfo", "footer, [role=contentinfo]"],
  ["complementary", "aside, [role=complementary]"], ["dialog", DIALOG_SELECTOR],
];

function attrsOf(el) {
  const out = {};
  let n = 0;
  for (const a of attributesOf(el)) {
    if (n++ > 24) break;
    if (indexOf(a.name, "on") === 0) continue;
    out[a.name] = sliceText(a.value, 0, 300);
  }
  if (isTag(el, "input", "textarea", "select")) {
    if (toLower(getAttr(el, "type") || "") === "password") delete out["value"];
    else out["value"] = sliceText(String(instanceGet(valueGetters, el, "") || ""), 0, 300);
  }
  return out;
}

function describe(el) {
  const text = clip(textOf(el, 120), 60);
  return tag(el) + (getAttr(el, "id") ? "#" + getAttr(el, "id") : "") + (text ? " " + JSON.stringify(text) : "");
}

function pingsOf(link) {
  const raw = link ? getAttr(link, "ping") : null;
  if (!raw) return [];
  const out = [];
  for (const part of raw.split(/\s+/)) if (part) push(out, resolve(part, link));
  return out.slice(0, 8);
}

function facts(el, opts, act) {
  opts = opts || {};
  if (!isElement(el)) return null;
  const ugcFound = ugcRegion(el, opts.ugc);
  const ugc = ugcFound ? ugcFound.node : null;
  let dialog = closestAcross(el, DIALOG_SELECTOR);
  const body = bodyOf(ownerDocumentOf(el));
  if (!dialog) {
    for (let node = el; isElement(node); node = parentOf(node)) {
      const position = style(node, "position");
      if ((position === "fixed" || position === "sticky") && node !== body) {
        const r = rectOf(node);
        if (r.width * r.height > 0.15 * innerW() * innerH() || parseInt(style(node, "z-index") || "0", 10) >= 100) {
          dialog = node;
          break;
        }
      }
    }
  }
  let link = null, submitter = null;
  if (act) {
    link = act.link;
    submitter = act.submitter;
  } else {
    for (let n = el; n && !link; n = flatParent(n)) if (isElement(n) && linkHref(n) !== null) link = n;
    submitter = isSubmitter(el) && formOf(el) ? el : null;
  }
  const t = tag(el);
  const visibleText = clip(innerTextOf(el), MAX_TEXT);
  const fullText = clip(textOf(el, MAX_TEXT * 2), MAX_TEXT);
  const reason = hiddenReason(el);
  let region = null;
  for (let node = el; node && !region; node = parentOf(node)) {
    if (!isElement(node)) continue;
    for (const [name, sel] of LANDMARKS) { if (matchesSel(node, sel)) { region = name; break; } }
  }
  const type = t === "input" ? toLower(getAttr(el, "type") || "text") : (t === "textarea" ? "textarea" : null);
  const aria = ariaText(el);
  const ownValue = instanceGet(valueGetters, el, null);
  if (type === "password") notePassword(el, String(ownValue || ""));
  const name = clip(accessibleName(el) || getAttr(el, "alt") ||
    (t === "input" && ["submit", "button"].includes(type) ? ownValue : "") || visibleText ||
    getAttr(el, "title") || getAttr(el, "placeholder") || "", 200);
  const ugcHit = ugcFound ? ugcFound.hit : null;
  const editable = contentEditableOf(el) ||
    ((t === "input" || t === "textarea") && !instanceGet(readOnlyGetters, el, false) && !instanceGet(disabledGetters, el, false));
  return {
    tag: t,
    role: getAttr(el, "role") || implicitRole(el),
    name,
    text: visibleText,
    hidden_text: fullText.length > visibleText.length + 8 ? fullText : "",
    aria_text: aria,
    attrs: attrsOf(el),
    href: link ? resolve(trimText(linkHref(link) || ""), link) : null,
    link_target: link ? getAttr(link, "target") : null,
    download: !!(link && hasAttr(link, "download")),
    pings: pingsOf(link),
    form: formFacts(submitter || el, submitter, !!submitter || !!(act && act.form)),
    is_submit: !!submitter || !!(act && act.form),
    activation: act ? (act.via || "direct") : null,
    pointed: act && act.pointed && act.pointed !== el ? describe(act.pointed) : null,
    frame_content: act && act.frame ? act.frame.frame : null,
    shadow_probe: act && act.probe ? act.probe : null,
    input_type: type,
    value: (t === "input" || t === "textarea") ? sliceText(String(ownValue || ""), 0, 300) : null,
    editable: !!editable,
    visible: reason === null,
    hidden_reason: reason,
    in_ugc: !!ugc,
    ugc_selector: ugcHit,
    in_dialog: !!dialog,
    overlay_in_ugc: !!(dialog && ugc && ugc !== dialog && containsNode(ugc, dialog)),
    region,
    context_text: neighbourhood(el, ugc, dialog),
    frame_url: docURLOf(ownerDocumentOf(el)),
    ...placeFacts(el, opts),
  };
}
