// Facts about an element, read in the page just before an action.
// Defines __pwFacts(el, opts) and __pwSources(needle, opts); used by observe/_gather.py.
// Cheap by design: it walks the ancestor chain and one neighbourhood, never the whole page
// (except __pwSources, which searches the page text for a given value).
const UGC_SELECTORS = [
  "[data-ugc]", ".user-content", ".markdown-body", ".comment-body", ".comment-content", ".note-body",
  ".note-text", ".md", ".post-body", ".post-content", ".issue-description", ".description .md",
  ".message-body", ".review-text", ".usertext-body", "[itemprop=text]", "[itemprop=articleBody]",
  "[itemprop=reviewBody]", "[role=comment]", "article", "[role=article]", "blockquote",
];
const DIALOG_SELECTOR = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
const LANDMARKS = [
  ["main", "main, [role=main]"], ["navigation", "nav, [role=navigation]"],
  ["banner", "header, [role=banner]"], ["contentinfo", "footer, [role=contentinfo]"],
  ["complementary", "aside, [role=complementary]"], ["dialog", DIALOG_SELECTOR],
];
const MAX_CONTEXT = 1200;
const MAX_TEXT = 400;

function clip(text, n) {
  text = (text || "").replace(/\s+/g, " ").trim();
  return text.length > n ? text.slice(0, n - 1) + "…" : text;
}

function textOf(node, limit) {
  // Text of a subtree, hidden text included, text nodes joined by spaces (not glued words).
  const parts = [];
  let size = 0;
  const doc = node.ownerDocument || document;
  const walker = doc.createTreeWalker(node, NodeFilter.SHOW_TEXT, {
    acceptNode: (t) => (t.parentElement && /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/.test(t.parentElement.tagName))
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  let t;
  while ((t = walker.nextNode()) && size < limit) {
    const value = t.nodeValue.trim();
    if (value) { parts.push(value); size += value.length + 1; }
  }
  return parts.join(" ");
}

function parentOf(node) {
  if (node.parentElement) return node.parentElement;
  const root = node.getRootNode && node.getRootNode();
  return root && root.host ? root.host : null;
}

function closestAcross(el, selector) {
  for (let node = el; node; node = parentOf(node)) {
    if (node.nodeType === 1 && node.matches(selector)) return node;
  }
  return null;
}

function hiddenReason(el) {
  if (!el.isConnected) return "detached";
  const rect = el.getBoundingClientRect();
  for (let node = el; node; node = parentOf(node)) {
    if (node.nodeType !== 1) continue;
    const style = getComputedStyle(node);
    if (style.display === "none") return "display:none";
    if (style.visibility === "hidden" || style.visibility === "collapse") return "visibility:hidden";
    if (parseFloat(style.opacity) < 0.05) return "transparent (opacity)";
    if (node.getAttribute("aria-hidden") === "true" && node === el) return "aria-hidden";
    if (style.clip === "rect(0px, 0px, 0px, 0px)" || style.clipPath === "inset(50%)" || style.clipPath === "inset(100%)") return "clipped";
    if (node !== el && (style.overflow === "hidden" || style.overflowX === "hidden") && (node.clientWidth <= 1 || node.clientHeight <= 1)) return "clipped by a zero-size box";
  }
  if (rect.width < 2 || rect.height < 2) return "zero size";
  const doc = el.ownerDocument;
  const vw = Math.max(doc.documentElement.scrollWidth, innerWidth);
  const vh = Math.max(doc.documentElement.scrollHeight, innerHeight);
  if (rect.right + scrollX < 0 || rect.bottom + scrollY < 0 || rect.left + scrollX > vw || rect.top + scrollY > vh) return "off-screen";
  const style = getComputedStyle(el);
  if (parseFloat(style.fontSize) < 4 && (el.innerText || "").trim()) return "tiny font";
  if ((el.innerText || "").trim() && style.color && sameColor(style.color, backgroundOf(el))) return "text colour equals background";
  return null;
}

function backgroundOf(el) {
  for (let node = el; node; node = parentOf(node)) {
    if (node.nodeType !== 1) continue;
    const bg = getComputedStyle(node).backgroundColor;
    if (bg && bg !== "transparent" && !/rgba\(\s*\d+,\s*\d+,\s*\d+,\s*0\s*\)/.test(bg)) return bg;
  }
  return "rgb(255, 255, 255)";
}

function sameColor(a, b) {
  const pa = (a.match(/[\d.]+/g) || []).map(Number), pb = (b.match(/[\d.]+/g) || []).map(Number);
  if (pa.length < 3 || pb.length < 3) return false;
  if (pa.length > 3 && pa[3] < 0.1) return true;
  return Math.abs(pa[0] - pb[0]) + Math.abs(pa[1] - pb[1]) + Math.abs(pa[2] - pb[2]) < 24;
}

function implicitRole(el) {
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute("type") || "").toLowerCase();
  if (tag === "a" || tag === "area") return el.hasAttribute("href") ? "link" : null;
  if (tag === "button") return "button";
  if (tag === "select") return el.multiple ? "listbox" : "combobox";
  if (tag === "textarea") return "textbox";
  if (tag === "input") {
    if (["button", "submit", "reset", "image"].includes(type)) return "button";
    if (type === "checkbox" || type === "radio") return type;
    if (type === "range") return "slider";
    if (type === "search") return "searchbox";
    if (type === "hidden") return null;
    return "textbox";
  }
  if (/^h[1-6]$/.test(tag)) return "heading";
  if (tag === "img") return "img";
  if (tag === "summary") return "button";
  if (el.isContentEditable) return "textbox";
  return null;
}

function labelText(el) {
  const parts = [];
  const ids = el.getAttribute("aria-labelledby");
  if (ids) {
    for (const id of ids.split(/\s+/)) {
      const ref = el.ownerDocument.getElementById(id);
      if (ref) parts.push(ref.textContent);
    }
  }
  if (el.labels) for (const label of el.labels) parts.push(label.innerText || label.textContent);
  return clip(parts.join(" "), 200);
}

function ariaText(el) {
  const parts = [];
  for (const name of ["aria-label", "aria-description", "title", "alt"]) {
    const value = el.getAttribute(name);
    if (value) parts.push(value);
  }
  const described = el.getAttribute("aria-describedby");
  if (described) {
    for (const id of described.split(/\s+/)) {
      const ref = el.ownerDocument.getElementById(id);
      if (ref) parts.push(ref.textContent);
    }
  }
  return clip(parts.join(" | "), MAX_TEXT);
}

function submitterOf(el) {
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute("type") || "").toLowerCase();
  if (tag === "button") return type === "" || type === "submit";
  if (tag === "input") return type === "submit" || type === "image";
  return false;
}

function formFacts(el, submitter) {
  const form = el.form || closestAcross(el, "form");
  if (!form) return null;
  const attr = (submitter && submitter.getAttribute("formaction")) || form.getAttribute("action");
  const explicit = attr !== null && attr.trim() !== "";
  let action;
  try { action = explicit ? new URL(attr, el.ownerDocument.baseURI).href : el.ownerDocument.URL; } catch (e) { action = attr; }
  const method = ((submitter && submitter.getAttribute("formmethod")) || form.getAttribute("method") || "get").toLowerCase();
  const target = (submitter && submitter.getAttribute("formtarget")) || form.getAttribute("target") || null;
  const fields = [];
  for (const f of Array.from(form.elements).slice(0, 60)) {
    if (!f.name || f.disabled) continue;
    const type = (f.type || f.tagName).toLowerCase();
    if (["submit", "button", "reset", "image"].includes(type)) continue;
    if ((type === "checkbox" || type === "radio") && !f.checked) continue;
    const value = type === "file" ? Array.from(f.files || []).map(x => x.name).join(", ") : String(f.value || "");
    fields.push({name: f.name, type, value: value.slice(0, 500)});
  }
  return {action, method, action_explicit: explicit, target, fields};
}

function neighbourhood(el, ugc, dialog) {
  let node = ugc || dialog;
  if (!node) {
    // Climb to the nearest container with some text, but not to one so large that it is
    // the whole page rather than the element's neighbourhood.
    node = el;
    for (let i = 0; i < 6 && parentOf(node); i++) {
      const up = parentOf(node);
      if (up.nodeType !== 1 || /^(BODY|HTML|MAIN)$/.test(up.tagName) || (up.textContent || "").length > 1500) break;
      node = up;
      if ((node.textContent || "").length > 160 || /^(P|LI|TD|SECTION|ARTICLE|FORM|ASIDE|HEADER|FOOTER)$/.test(node.tagName)) break;
    }
  }
  // Hidden text is included on purpose: injections hide there.
  let text = textOf(node, MAX_CONTEXT * 2);
  const extras = [];
  for (const child of node.querySelectorAll("[aria-label],[title],[alt],[aria-description]")) {
    extras.push(ariaText(child));
    if (extras.length > 20) break;
  }
  return clip(text + (extras.length ? " | " + extras.join(" | ") : ""), MAX_CONTEXT);
}

function attrsOf(el) {
  const out = {};
  let n = 0;
  for (const a of el.attributes) {
    if (n++ > 24) break;
    if (a.name.startsWith("on")) continue;
    out[a.name] = a.value.slice(0, 300);
  }
  if (["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) {
    if (el.type === "password") delete out["value"];
    else out["value"] = String(el.value || "").slice(0, 300);
  }
  return out;
}

function __pwFacts(el, opts) {
  opts = opts || {};
  if (!el || el.nodeType !== 1) return null;
  const ugcSelector = UGC_SELECTORS.concat(opts.ugc || []).join(", ");
  const ugc = closestAcross(el, ugcSelector);
  let dialog = closestAcross(el, DIALOG_SELECTOR);
  if (!dialog) {
    for (let node = el; node && node.nodeType === 1; node = parentOf(node)) {
      const style = getComputedStyle(node);
      if ((style.position === "fixed" || style.position === "sticky") && node !== el.ownerDocument.body) {
        const r = node.getBoundingClientRect();
        if (r.width * r.height > 0.15 * innerWidth * innerHeight || parseInt(style.zIndex || "0", 10) >= 100) { dialog = node; break; }
      }
    }
  }
  const link = closestAcross(el, "a[href], area[href]");
  const submitter = submitterOf(el) && (el.form || closestAcross(el, "form")) ? el : null;
  const tag = el.tagName.toLowerCase();
  const inner = el.innerText !== undefined ? el.innerText : el.textContent;
  const full = textOf(el, MAX_TEXT * 2);
  const visibleText = clip(inner, MAX_TEXT);
  const fullText = clip(full, MAX_TEXT);
  const reason = hiddenReason(el);
  let region = null;
  for (let node = el; node && !region; node = parentOf(node)) {
    if (node.nodeType !== 1) continue;
    for (const [name, sel] of LANDMARKS) { if (node.matches(sel)) { region = name; break; } }
  }
  const type = tag === "input" ? (el.getAttribute("type") || "text").toLowerCase() : (tag === "textarea" ? "textarea" : null);
  const aria = ariaText(el);
  const name = clip(labelText(el) || el.getAttribute("aria-label") || el.getAttribute("alt") ||
    (tag === "input" && ["submit", "button"].includes(type) ? el.value : "") || visibleText ||
    el.getAttribute("title") || el.getAttribute("placeholder") || "", 200);
  let ugcSelectorHit = null;
  if (ugc) { for (const s of UGC_SELECTORS.concat(opts.ugc || [])) { try { if (ugc.matches(s)) { ugcSelectorHit = s; break; } } catch (e) {} } }
  return {
    tag,
    role: el.getAttribute("role") || implicitRole(el),
    name,
    text: visibleText,
    hidden_text: fullText.length > visibleText.length + 8 ? fullText : "",
    aria_text: aria,
    attrs: attrsOf(el),
    href: link ? link.href : null,
    link_target: link ? link.getAttribute("target") : null,
    download: !!(link && link.hasAttribute("download")),
    form: formFacts(el, submitter),
    is_submit: !!submitter,
    input_type: type,
    value: (tag === "input" || tag === "textarea") ? String(el.value || "").slice(0, 300) : null,
    editable: el.isContentEditable || ((tag === "input" || tag === "textarea") && !el.readOnly && !el.disabled),
    visible: reason === null,
    hidden_reason: reason,
    in_ugc: !!ugc,
    ugc_selector: ugcSelectorHit,
    in_dialog: !!dialog,
    overlay_in_ugc: !!(dialog && ugc && ugc !== dialog && ugc.contains(dialog)),
    region,
    context_text: neighbourhood(el, ugc, dialog),
    frame_url: el.ownerDocument.URL,
  };
}

function __pwSources(needle, opts) {
  // Where `needle` (a typed value or a URL) occurs in the page: text (hidden included),
  // link targets and aria attributes; each with ~300 characters of surroundings.
  opts = opts || {};
  const out = [];
  if (!needle || needle.length < 6) return out;
  const lower = needle.toLowerCase();
  const ugcSelector = UGC_SELECTORS.concat(opts.ugc || []).join(", ");
  const doc = document;
  const push = (node, snippet, kind) => {
    const el = node.nodeType === 1 ? node : node.parentElement;
    if (!el) return;
    out.push({
      snippet: clip(snippet, 600),
      in_ugc: !!closestAcross(el, ugcSelector),
      hidden: hiddenReason(el) !== null,
      in_dialog: !!closestAcross(el, DIALOG_SELECTOR),
      kind,
    });
  };
  const body = doc.body;
  if (!body) return out;
  const walker = doc.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  let node, seen = 0;
  while ((node = walker.nextNode()) && out.length < 4 && seen < 20000) {
    seen++;
    const text = node.nodeValue;
    if (!text || text.length < 6) continue;
    const at = text.toLowerCase().indexOf(lower);
    if (at < 0) continue;
    const block = closestAcross(node.parentElement, UGC_SELECTORS.join(", ") + ", " + DIALOG_SELECTOR + ", p, li, div") || node.parentElement;
    push(node, textOf(block, 900) || text, "text");
  }
  for (const a of doc.querySelectorAll("a[href], area[href], form[action], [aria-label], [title]")) {
    if (out.length >= 6) break;
    const href = a.href || a.getAttribute("action") || "";
    const label = (a.getAttribute("aria-label") || "") + " " + (a.getAttribute("title") || "");
    if (href && href.toLowerCase().indexOf(lower) >= 0) {
      const block = closestAcross(a, UGC_SELECTORS.join(", ") + ", " + DIALOG_SELECTOR + ", p, li") || a;
      push(a, textOf(block, 900) + " " + href, "href");
    } else if (label.toLowerCase().indexOf(lower) >= 0) {
      push(a, label, "attribute");
    }
  }
  return out;
}

function __pwResult(el, opts) {
  return {count: el ? 1 : 0, facts: el ? __pwFacts(el, opts) : null,
          sources: opts.needle ? __pwSources(opts.needle, opts) : []};
}

function __pwAtPoint(opts) {
  let el = document.elementFromPoint(opts.x, opts.y);
  while (el && el.shadowRoot && el.shadowRoot.elementFromPoint) {
    const inner = el.shadowRoot.elementFromPoint(opts.x, opts.y);
    if (!inner || inner === el) break;
    el = inner;
  }
  return __pwResult(el, opts);
}

function __pwFocused(opts) {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  try {
    while (el && el.tagName === "IFRAME" && el.contentDocument && el.contentDocument.activeElement) {
      el = el.contentDocument.activeElement;
    }
  } catch (e) { /* cross-origin frame: stop at the iframe */ }
  if (el === document.body || el === document.documentElement) el = null;
  return __pwResult(el, opts);
}
