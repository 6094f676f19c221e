// pagewarden's facts reader: what an element is, says, hides and leads to, read in the page
// just before an action. `__pwLibrary()` builds the reader from the DOM primitives it finds
// when it runs and keeps them: installed by an init script (before any page script), a page
// that later patches getComputedStyle, getAttribute, textContent, href … cannot make it lie.
// Used by observe/_gather.py; the entry points return plain JSON-able objects.
function __pwLibrary() {
  "use strict";
  const W = window;
  const apply = Reflect.apply;
  const getOwn = Object.getOwnPropertyDescriptor;
  const uncurry = (fn) => (self, ...args) => apply(fn, self, args);
  const getter = (proto, name) => {
    for (let p = proto; p; p = Object.getPrototypeOf(p)) {
      const d = getOwn(p, name);
      if (d && d.get) return uncurry(d.get);
    }
    return (self) => self[name];
  };
  const EP = Element.prototype, NP = Node.prototype, HP = HTMLElement.prototype;
  const computedStyle = uncurry(W.getComputedStyle);
  const styleValue = uncurry(CSSStyleDeclaration.prototype.getPropertyValue);
  const rectOf = uncurry(EP.getBoundingClientRect);
  const matchesSel = uncurry(EP.matches);
  const getAttr = uncurry(EP.getAttribute);
  const hasAttr = uncurry(EP.hasAttribute);
  const queryAll = uncurry(EP.querySelectorAll);
  const docQueryAll = uncurry(Document.prototype.querySelectorAll);
  const byId = uncurry(Document.prototype.getElementById);
  const containsNode = uncurry(NP.contains);
  const rootOf = uncurry(NP.getRootNode);
  const makeWalker = uncurry(Document.prototype.createTreeWalker);
  const walkNext = uncurry(TreeWalker.prototype.nextNode);
  const fromPoint = uncurry(Document.prototype.elementFromPoint);
  const shadowFromPoint = ShadowRoot.prototype.elementFromPoint ? uncurry(ShadowRoot.prototype.elementFromPoint) : null;
  const parentElementOf = getter(NP, "parentElement");
  const nodeTypeOf = getter(NP, "nodeType");
  const nodeValueOf = getter(NP, "nodeValue");
  const textContentOf = getter(NP, "textContent");
  const ownerDocumentOf = getter(NP, "ownerDocument");
  const isConnectedOf = getter(NP, "isConnected");
  const baseURIOf = getter(NP, "baseURI");
  const tagNameOf = getter(EP, "tagName");
  const attributesOf = getter(EP, "attributes");
  const shadowRootOf = getter(EP, "shadowRoot");
  const clientWidthOf = getter(EP, "clientWidth");
  const clientHeightOf = getter(EP, "clientHeight");
  const innerTextOf = getter(HP, "innerText");
  const contentEditableOf = getter(HP, "isContentEditable");
  const hostOf = getter(ShadowRoot.prototype, "host");
  const activeOf = getter(Document.prototype, "activeElement");
  const shadowActiveOf = getter(ShadowRoot.prototype, "activeElement");
  const docURLOf = getter(Document.prototype, "URL");
  const bodyOf = getter(Document.prototype, "body");
  const docElementOf = getter(Document.prototype, "documentElement");
  const scrollWidthOf = getter(EP, "scrollWidth");
  const scrollHeightOf = getter(EP, "scrollHeight");
  const contentDocumentOf = getter(HTMLIFrameElement.prototype, "contentDocument");
  const FORM_OWNERS = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement,
    HTMLOutputElement, HTMLFieldSetElement, HTMLObjectElement];
  const formGetters = FORM_OWNERS.map((C) => [C, getter(C.prototype, "form")]);
  const labelsGetters = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement,
    HTMLOutputElement, HTMLMeterElement, HTMLProgressElement].map((C) => [C, getter(C.prototype, "labels")]);
  const valueGetters = [HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement, HTMLButtonElement]
    .map((C) => [C, getter(C.prototype, "value")]);
  const inputFiles = getter(HTMLInputElement.prototype, "files");
  const checkedOf = getter(HTMLInputElement.prototype, "checked");
  const disabledGetters = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement]
    .map((C) => [C, getter(C.prototype, "disabled")]);
  const readOnlyGetters = [HTMLInputElement, HTMLTextAreaElement].map((C) => [C, getter(C.prototype, "readOnly")]);
  const formElementsOf = getter(HTMLFormElement.prototype, "elements");
  const nameGetters = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement]
    .map((C) => [C, getter(C.prototype, "name")]);
  const multipleOf = getter(HTMLSelectElement.prototype, "multiple");
  const URL_ = W.URL;
  const toLower = uncurry(String.prototype.toLowerCase);
  const indexOf = uncurry(String.prototype.indexOf);
  const replaceText = uncurry(String.prototype.replace);
  const sliceText = uncurry(String.prototype.slice);
  const trimText = uncurry(String.prototype.trim);
  const testRe = uncurry(RegExp.prototype.test);
  const push = uncurry(Array.prototype.push);
  const joinList = uncurry(Array.prototype.join);
  const SHOW_TEXT = NodeFilter.SHOW_TEXT;
  const innerW = () => W.innerWidth, innerH = () => W.innerHeight;

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

  const instanceGet = (table, el, fallback) => {
    for (const [C, get] of table) if (el instanceof C) return get(el);
    return fallback;
  };
  const isElement = (n) => !!n && nodeTypeOf(n) === 1;
  const tag = (el) => toLower(tagNameOf(el));
  const style = (el, name) => styleValue(computedStyle(W, el), name);

  function clip(text, n) {
    text = trimText(replaceText(String(text || ""), /\s+/g, " "));
    return text.length > n ? sliceText(text, 0, n - 1) + "…" : text;
  }

  function textOf(node, limit) {
    // Text of a subtree, hidden text included, text nodes joined by spaces (not glued words).
    const parts = [];
    let size = 0;
    const walker = makeWalker(ownerDocumentOf(node) || document, node, SHOW_TEXT);
    let t;
    while ((t = walkNext(walker)) && size < limit) {
      const parent = parentElementOf(t);
      if (parent && testRe(/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/, tagNameOf(parent))) continue;
      const value = trimText(nodeValueOf(t) || "");
      if (value) { push(parts, value); size += value.length + 1; }
    }
    return joinList(parts, " ");
  }

  function parentOf(node) {
    const up = parentElementOf(node);
    if (up) return up;
    const root = rootOf(node);
    return root && root instanceof ShadowRoot ? hostOf(root) : null;
  }

  function closestAcross(el, selector) {
    for (let node = el; node; node = parentOf(node)) {
      if (isElement(node) && matchesSel(node, selector)) return node;
    }
    return null;
  }

  function backgroundOf(el) {
    for (let node = el; node; node = parentOf(node)) {
      if (!isElement(node)) continue;
      const bg = style(node, "background-color");
      if (bg && bg !== "transparent" && !testRe(/rgba\(\s*\d+,\s*\d+,\s*\d+,\s*0\s*\)/, bg)) return bg;
    }
    return "rgb(255, 255, 255)";
  }

  function sameColor(a, b) {
    const pa = (a.match(/[\d.]+/g) || []).map(Number), pb = (b.match(/[\d.]+/g) || []).map(Number);
    if (pa.length < 3 || pb.length < 3) return false;
    if (pa.length > 3 && pa[3] < 0.1) return true;
    return Math.abs(pa[0] - pb[0]) + Math.abs(pa[1] - pb[1]) + Math.abs(pa[2] - pb[2]) < 24;
  }

  function hiddenReason(el) {
    if (!isConnectedOf(el)) return "detached";
    const rect = rectOf(el);
    for (let node = el; node; node = parentOf(node)) {
      if (!isElement(node)) continue;
      if (style(node, "display") === "none") return "display:none";
      const visibility = style(node, "visibility");
      if (visibility === "hidden" || visibility === "collapse") return "visibility:hidden";
      if (parseFloat(style(node, "opacity")) < 0.05) return "transparent (opacity)";
      if (node === el && getAttr(node, "aria-hidden") === "true") return "aria-hidden";
      const clipValue = style(node, "clip"), clipPath = style(node, "clip-path");
      if (clipValue === "rect(0px, 0px, 0px, 0px)" || clipPath === "inset(50%)" || clipPath === "inset(100%)") return "clipped";
      const overflow = style(node, "overflow-x");
      if (node !== el && (overflow === "hidden" || style(node, "overflow") === "hidden") &&
          (clientWidthOf(node) <= 1 || clientHeightOf(node) <= 1)) return "clipped by a zero-size box";
    }
    if (rect.width < 2 || rect.height < 2) return "zero size";
    const root = docElementOf(ownerDocumentOf(el));
    const vw = Math.max(scrollWidthOf(root), innerW());
    const vh = Math.max(scrollHeightOf(root), innerH());
    const sx = W.scrollX, sy = W.scrollY;
    if (rect.right + sx < 0 || rect.bottom + sy < 0 || rect.left + sx > vw || rect.top + sy > vh) return "off-screen";
    const visibleText = trimText(innerTextOf(el) || "");
    if (parseFloat(style(el, "font-size")) < 4 && visibleText) return "tiny font";
    const color = style(el, "color");
    if (visibleText && color && sameColor(color, backgroundOf(el))) return "text colour equals background";
    return null;
  }

  function implicitRole(el) {
    const t = tag(el);
    const type = toLower(getAttr(el, "type") || "");
    if (t === "a" || t === "area") return hasAttr(el, "href") ? "link" : null;
    if (t === "button") return "button";
    if (t === "select") return multipleOf(el) ? "listbox" : "combobox";
    if (t === "textarea") return "textbox";
    if (t === "input") {
      if (["button", "submit", "reset", "image"].includes(type)) return "button";
      if (type === "checkbox" || type === "radio") return type;
      if (type === "range") return "slider";
      if (type === "search") return "searchbox";
      if (type === "hidden") return null;
      return "textbox";
    }
    if (testRe(/^h[1-6]$/, t)) return "heading";
    if (t === "img") return "img";
    if (t === "summary") return "button";
    if (el instanceof HTMLElement && contentEditableOf(el)) return "textbox";
    return null;
  }

  function refsText(el, attribute) {
    const ids = getAttr(el, attribute);
    const parts = [];
    if (!ids) return parts;
    const doc = ownerDocumentOf(el);
    for (const id of ids.split(/\s+/)) {
      const ref = id ? byId(doc, id) : null;
      if (ref) push(parts, textOf(ref, MAX_TEXT));
    }
    return parts;
  }

  function ariaText(el) {
    const parts = [];
    for (const name of ["aria-label", "aria-description", "title", "alt"]) {
      const value = getAttr(el, name);
      if (value) push(parts, value);
    }
    for (const text of refsText(el, "aria-describedby")) push(parts, text);
    return clip(joinList(parts, " | "), MAX_TEXT);
  }

  function isSubmitter(el) {
    const t = tag(el);
    const type = toLower(getAttr(el, "type") || "");
    if (t === "button") return type === "" || type === "submit";
    if (t === "input") return type === "submit" || type === "image";
    return false;
  }

  function resolve(url, el) {
    try { return new URL_(url, baseURIOf(el)).href; } catch (e) { return url; }
  }

  function formOf(el) {
    return instanceGet(formGetters, el, null) || closestAcross(el, "form");
  }

  function formFacts(el, submitter) {
    const form = formOf(el);
    if (!form) return null;
    const attr = (submitter && getAttr(submitter, "formaction")) || getAttr(form, "action");
    const explicit = attr !== null && trimText(attr) !== "";
    const action = explicit ? resolve(attr, el) : docURLOf(ownerDocumentOf(el));
    const method = toLower((submitter && getAttr(submitter, "formmethod")) || getAttr(form, "method") || "get");
    const target = (submitter && getAttr(submitter, "formtarget")) || getAttr(form, "target") || null;
    const fields = [];
    let n = 0;
    for (const f of formElementsOf(form)) {
      if (n++ >= 60) break;
      const name = instanceGet(nameGetters, f, getAttr(f, "name"));
      if (!name || instanceGet(disabledGetters, f, false)) continue;
      const type = toLower(getAttr(f, "type") || (tag(f) === "input" ? "text" : tag(f)));
      if (["submit", "button", "reset", "image"].includes(type)) continue;
      if ((type === "checkbox" || type === "radio") && !checkedOf(f)) continue;
      let value;
      if (type === "file") value = Array.from(inputFiles(f) || []).map((x) => x.name).join(", ");
      else value = String(instanceGet(valueGetters, f, "") || "");
      push(fields, {name, type, value: sliceText(value, 0, 500)});
    }
    return {action, method, action_explicit: explicit, target, fields};
  }

  function neighbourhood(el, ugc, dialog) {
    let node = ugc || dialog;
    if (!node) {
      // The nearest container with some text, but not one so large it is the whole page.
      node = el;
      for (let i = 0; i < 6 && parentOf(node); i++) {
        const up = parentOf(node);
        if (!isElement(up) || testRe(/^(BODY|HTML|MAIN)$/, tagNameOf(up)) || (textContentOf(up) || "").length > 1500) break;
        node = up;
        if ((textContentOf(node) || "").length > 160 ||
            testRe(/^(P|LI|TD|SECTION|ARTICLE|FORM|ASIDE|HEADER|FOOTER)$/, tagNameOf(node))) break;
      }
    }
    // Hidden text is included on purpose: injections hide there.
    const text = textOf(node, MAX_CONTEXT * 2);
    const extras = [];
    for (const child of queryAll(node, "[aria-label],[title],[alt],[aria-description]")) {
      push(extras, ariaText(child));
      if (extras.length > 20) break;
    }
    return clip(text + (extras.length ? " | " + joinList(extras, " | ") : ""), MAX_CONTEXT);
  }

  function attrsOf(el) {
    const out = {};
    let n = 0;
    for (const a of attributesOf(el)) {
      if (n++ > 24) break;
      if (indexOf(a.name, "on") === 0) continue;
      out[a.name] = sliceText(a.value, 0, 300);
    }
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) {
      if (toLower(getAttr(el, "type") || "") === "password") delete out["value"];
      else out["value"] = sliceText(String(instanceGet(valueGetters, el, "") || ""), 0, 300);
    }
    return out;
  }

  function facts(el, opts) {
    opts = opts || {};
    if (!isElement(el)) return null;
    const ugcSelector = joinList(UGC_SELECTORS.concat(opts.ugc || []), ", ");
    const ugc = closestAcross(el, ugcSelector);
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
    const link = closestAcross(el, "a[href], area[href]");
    const submitter = isSubmitter(el) && formOf(el) ? el : null;
    const t = tag(el);
    const visibleText = clip(el instanceof HTMLElement ? innerTextOf(el) : textContentOf(el), MAX_TEXT);
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
    const name = clip(accessibleName(el) || getAttr(el, "alt") ||
      (t === "input" && ["submit", "button"].includes(type) ? ownValue : "") || visibleText ||
      getAttr(el, "title") || getAttr(el, "placeholder") || "", 200);
    let ugcHit = null;
    if (ugc) {
      for (const s of UGC_SELECTORS.concat(opts.ugc || [])) {
        try { if (matchesSel(ugc, s)) { ugcHit = s; break; } } catch (e) { /* invalid custom selector */ }
      }
    }
    const editable = (el instanceof HTMLElement && contentEditableOf(el)) ||
      ((t === "input" || t === "textarea") && !instanceGet(readOnlyGetters, el, false) && !instanceGet(disabledGetters, el, false));
    return {
      tag: t,
      role: getAttr(el, "role") || implicitRole(el),
      name,
      text: visibleText,
      hidden_text: fullText.length > visibleText.length + 8 ? fullText : "",
      aria_text: aria,
      attrs: attrsOf(el),
      href: link ? resolve(getAttr(link, "href"), link) : null,
      link_target: link ? getAttr(link, "target") : null,
      download: !!(link && hasAttr(link, "download")),
      form: formFacts(el, submitter),
      is_submit: !!submitter,
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

  function attrQuery(names, value) {
    const quoted = '"' + replaceText(replaceText(value, /\\/g, "\\\\"), /"/g, '\\"') + '"';
    return joinList(names.map((n) => "[" + n + "*=" + quoted + " i]"), ", ");
  }

  function sources(needle, opts) {
    // Where `needle` (a typed value, or a URL as host+path) occurs in the page: text (hidden
    // included), link targets and aria/title attributes, each with its surroundings. Native
    // searches first, so a page without the needle costs one textContent scan and two queries.
    opts = opts || {};
    const out = [];
    if (!needle || needle.length < 6) return out;
    const lower = toLower(needle);
    const ugcSelector = joinList(UGC_SELECTORS.concat(opts.ugc || []), ", ");
    const blockSelector = joinList(UGC_SELECTORS, ", ") + ", " + DIALOG_SELECTOR + ", p, li, div";
    const doc = document;
    const body = bodyOf(doc);
    if (!body) return out;
    const add = (node, snippet, kind) => {
      const el = isElement(node) ? node : parentElementOf(node);
      if (!el) return;
      push(out, {
        snippet: clip(snippet, 600),
        in_ugc: !!closestAcross(el, ugcSelector),
        hidden: hiddenReason(el) !== null,
        in_dialog: !!closestAcross(el, DIALOG_SELECTOR),
        kind,
      });
    };
    if (indexOf(toLower(textContentOf(body) || ""), lower) >= 0) {
      const walker = makeWalker(doc, body, SHOW_TEXT);
      let node, seen = 0;
      while ((node = walkNext(walker)) && out.length < 4 && seen < 50000) {
        seen++;
        const text = nodeValueOf(node);
        if (!text || text.length < 6 || indexOf(toLower(text), lower) < 0) continue;
        const parent = parentElementOf(node);
        const block = (parent && closestAcross(parent, blockSelector)) || parent;
        add(node, (block && textOf(block, 900)) || text, "text");
      }
    }
    const linkBlock = joinList(UGC_SELECTORS, ", ") + ", " + DIALOG_SELECTOR + ", p, li";
    const hrefNeedle = opts.path && opts.path.length >= 2 ? opts.path : needle;
    let candidates = [];
    try { candidates = docQueryAll(doc, attrQuery(["href"], hrefNeedle) + ", " + attrQuery(["action"], hrefNeedle)); }
    catch (e) { /* a needle the selector syntax cannot carry: text search only */ }
    for (const a of candidates) {
      if (out.length >= 6) break;
      const raw = getAttr(a, "href") || getAttr(a, "action") || "";
      const href = raw ? resolve(raw, a) : "";
      if (href && indexOf(toLower(href), lower) >= 0) {
        add(a, textOf(closestAcross(a, linkBlock) || a, 900) + " " + href, "href");
      }
    }
    let labelled = [];
    try { labelled = docQueryAll(doc, attrQuery(["aria-label", "title", "aria-description", "alt"], needle)); }
    catch (e) { /* see above */ }
    for (const a of labelled) {
      if (out.length >= 6) break;
      const label = joinList([getAttr(a, "aria-label"), getAttr(a, "title"), getAttr(a, "aria-description"),
        getAttr(a, "alt")].filter(Boolean), " ");
      add(a, label, "attribute");
    }
    return out;
  }

  function result(el, opts) {
    return {count: el ? 1 : 0, facts: el ? facts(el, opts) : null,
            sources: opts.needle ? sources(opts.needle, opts) : []};
  }

  function atPoint(opts) {
    let el = fromPoint(document, opts.x, opts.y);
    while (el && shadowFromPoint && shadowRootOf(el)) {
      const inner = shadowFromPoint(shadowRootOf(el), opts.x, opts.y);
      if (!inner || inner === el) break;
      el = inner;
    }
    return result(el, opts);
  }

  function focused(opts) {
    let el = activeOf(document);
    while (el && shadowRootOf(el) && shadowActiveOf(shadowRootOf(el))) el = shadowActiveOf(shadowRootOf(el));
    try {
      while (el && el instanceof HTMLIFrameElement && contentDocumentOf(el) && activeOf(contentDocumentOf(el))) {
        el = activeOf(contentDocumentOf(el));
      }
    } catch (e) { /* cross-origin frame: stop at the iframe */ }
    if (el === bodyOf(document) || el === docElementOf(document)) el = null;
    return result(el, opts);
  }

  // -- accessible names, fields and overlays ----------------------------------------------
  // Names as the accessibility tree gives them (aria-labelledby, then aria-label, then <label>),
  // so the guard and Playwright's get_by_label / get_by_role agree on which field is which.
  function accessibleName(el) {
    const labelledBy = refsText(el, "aria-labelledby");
    if (labelledBy.length) return clip(joinList(labelledBy, " "), 200);
    const aria = getAttr(el, "aria-label");
    if (aria && trimText(aria)) return clip(aria, 200);
    const parts = [];
    const labels = instanceGet(labelsGetters, el, null);
    if (labels) for (const label of labels) push(parts, innerTextOf(label) || textOf(label, 200));
    return clip(joinList(parts, " "), 200);
  }

  function effectiveOpacity(el) {
    let opacity = 1;
    for (let node = el; node; node = parentOf(node)) {
      if (!isElement(node)) continue;
      const v = parseFloat(style(node, "opacity"));
      if (!isNaN(v)) opacity *= v;
    }
    return Math.round(opacity * 1000) / 1000;
  }

  const FIELD_SELECTOR = "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset])" +
    ":not([type=image]):not([type=checkbox]):not([type=radio]), textarea, select, [contenteditable=true]";

  const controlOf = getter(HTMLLabelElement.prototype, "control");
  const originOfURL = (url) => { try { return new URL_(url).origin; } catch (e) { return "null"; } };
  const Set_ = W.Set;
  function fieldFacts(el) {
    // The field itself: how visible it is, and whether another field on the page carries the same
    // accessible name (a mirror), in which form, posting where. Candidates are found natively and
    // case-exactly (aria-label, placeholder, the text of at most 80 labels), so the cost stays small
    // whatever the number of fields on the page.
    const rect = rectOf(el);
    const shown = trimText(accessibleName(el) || getAttr(el, "placeholder") || "");
    const name = toLower(shown);
    const form = formOf(el);
    let mirrors = 0, mirrorAction = null, mirrorInForm = false;
    // Only a field that posts to another origin, or belongs to no form, is searched for mirrors:
    // a field of a form posting to the page's own origin is the site's own in any case.
    let ownForm = false;
    if (form) {
      const attr = getAttr(form, "action");
      const action = attr && trimText(attr) ? resolve(attr, form) : docURLOf(ownerDocumentOf(el));
      ownForm = originOfURL(action) === originOfURL(docURLOf(ownerDocumentOf(el)));
    }
    if (name && !ownForm) {
      const doc = ownerDocumentOf(el);
      const candidates = [];
      try {
        const quoted = '"' + replaceText(replaceText(shown, /\\/g, "\\\\"), /"/g, '\\"') + '"';
        for (const other of docQueryAll(doc, "[aria-label=" + quoted + "], [placeholder=" + quoted + "]")) {
          push(candidates, other);
        }
      } catch (e) { /* a name the selector syntax cannot carry */ }
      let labels = 0;
      for (const label of docQueryAll(doc, "label")) {
        if (++labels > 150) break;
        const text = textContentOf(label) || "";
        if (text.length < name.length || text.length > name.length * 3 + 24) continue;
        const control = controlOf(label);
        if (control && toLower(trimText(replaceText(text, /\s+/g, " "))) === name) push(candidates, control);
      }
      for (const other of new Set_(candidates)) {
        if (other === el || !matchesSel(other, FIELD_SELECTOR)) continue;
        const otherName = toLower(trimText(accessibleName(other) || getAttr(other, "placeholder") || ""));
        if (otherName !== name || hiddenReason(other) !== null) continue;
        mirrors++;
        const otherForm = formOf(other);
        if (otherForm && otherForm !== form) {
          mirrorInForm = true;
          if (mirrorAction === null) {
            const f = formFacts(other, null);
            mirrorAction = f ? f.action : null;
          }
        }
      }
    }
    return {opacity: effectiveOpacity(el), width: Math.round(rect.width), height: Math.round(rect.height),
            mirrors, mirror_form_action: mirrorAction, mirror_in_form: mirrorInForm};
  }

  // What changed in the DOM and when the agent last gave input, so that a box over the page can
  // be told apart: one the agent's own click opened, or one the page put there by itself.
  const byInput = new WeakSet();  // nodes inserted or changed within seconds after the agent's input
  const inputTimes = [];
  function watchOverlays(add) {
    const note = (event) => { if (event.isTrusted) { push(inputTimes, Date.now()); if (inputTimes.length > 20) inputTimes.shift(); } };
    add(W, "pointerdown", note, true);
    add(W, "keydown", note, true);
    try {
      const observer = new MutationObserver((records) => {
        const last = inputTimes.length ? inputTimes[inputTimes.length - 1] : 0;
        if (!last || Date.now() - last > 5000) return;
        for (const record of records) {
          if (record.type === "attributes") byInput.add(record.target);
          else for (const node of record.addedNodes) if (isElement(node)) byInput.add(node);
        }
      });
      observer.observe(document, {subtree: true, childList: true, attributes: true,
                                  attributeFilter: ["style", "class", "open", "hidden", "popover"]});
    } catch (e) { /* no observer: every overlay counts as the page's own */ }
    watching = true;
  }
  let watching = false;

  function openedByAgent(box) {
    // True when the box (or an ancestor below <body>) was inserted or changed within seconds
    // after the agent's own click or key press in this document.
    if (!watching) return null;
    for (let node = box; node && isElement(node) && !testRe(/^(BODY|HTML)$/, tagNameOf(node)); node = parentOf(node)) {
      if (byInput.has(node)) return true;
    }
    return false;
  }

  const OVERLAY_ROLES = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
  function overlayBox(el) {
    const body = bodyOf(ownerDocumentOf(el));
    for (let node = el; isElement(node) && node !== body; node = parentOf(node)) {
      if (matchesSel(node, OVERLAY_ROLES)) return [node, "dialog"];
      try { if (matchesSel(node, ":popover-open")) return [node, "popover"]; } catch (e) { /* old engine */ }
      const position = style(node, "position");
      if (position === "fixed" || position === "sticky") return [node, position];
      if (position === "absolute" && parseInt(style(node, "z-index") || "0", 10) >= 100) {
        const r = rectOf(node);
        if (r.width * r.height >= 0.05 * innerW() * innerH()) return [node, "absolute"];
      }
    }
    return [null, null];
  }

  function overlayFacts(el) {
    const [box, kind] = overlayBox(el);
    if (!box) return null;
    const r = rectOf(box);
    const origin = (() => { try { return new URL_(docURLOf(ownerDocumentOf(el))).origin; } catch (e) { return ""; } })();
    let links = 0, sameOrigin = 0, controls = 0;
    for (const node of queryAll(box, "a[href], button, input, select, textarea, [role=button], [role=link]")) {
      if (++controls > 60) break;
      if (tag(node) !== "a") continue;
      links++;
      const href = resolve(getAttr(node, "href") || "", node);
      try { if (new URL_(href).origin === origin) sameOrigin++; } catch (e) { /* not a URL */ }
    }
    return {
      kind,
      area: Math.round(Math.max(0, r.width) * Math.max(0, r.height) / Math.max(1, innerW() * innerH()) * 100) / 100,
      agent_opened: openedByAgent(box),
      links, same_origin_links: sameOrigin, controls,
      landmark: !!closestAcross(box, "header, nav, footer, [role=banner], [role=navigation], [role=contentinfo]"),
      text: clip(textOf(box, 400), 300),
    };
  }

  const CLOSE_HINT = /(^|[\s_-])(close|dismiss|cancel)([\s_-]|$)/i;
  function closesSomething(el) {
    // Built as a close control: dismiss data attributes, a dialog-method form, popover hiding,
    // or an id / class / aria-label that starts with close.
    for (const a of ["data-dismiss", "data-bs-dismiss", "data-close"]) if (hasAttr(el, a)) return true;
    const action = toLower(getAttr(el, "popovertargetaction") || getAttr(el, "command") || "");
    if (action === "hide" || action === "close" || action === "request-close") return true;
    const form = formOf(el);
    if (form && isSubmitter(el) && toLower(getAttr(el, "formmethod") || getAttr(form, "method") || "") === "dialog") return true;
    const id = getAttr(el, "id") || "", cls = getAttr(el, "class") || "";
    if (testRe(CLOSE_HINT, id) || testRe(CLOSE_HINT, cls)) return true;
    const aria = trimText(getAttr(el, "aria-label") || getAttr(el, "title") || "");
    return testRe(/^(close|dismiss|cancel)\b/i, aria);
  }

  function placeFacts(el, opts) {
    return {
      overlay: overlayFacts(el),
      closes: closesSomething(el),
      field: opts.field && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ||
        el instanceof HTMLSelectElement || (el instanceof HTMLElement && contentEditableOf(el))) ? fieldFacts(el) : null,
    };
  }

  // -- destination pinning ------------------------------------------------------------------
  // A page can show one link target and swap it when the click comes (on mousedown), or
  // rewrite a form's action on submit. When the guard has judged a click, the destination
  // it judged is pinned here; a listener that runs before any page listener stops the
  // navigation if, at click or submit time, it leads to another origin. Only the installed
  // reader pins (the inline one has no listener and no memory between calls).
  const originOf = (url) => { try { return new URL_(url).origin; } catch (e) { return "null"; } };
  let pinned = null;
  const stopped = [];
  function pin(el, f) {
    const link = closestAcross(el, "a[href], area[href]");
    const form = f && f.form ? formOf(el) : null;
    pinned = {link, href: f ? f.href : null, form, action: f && f.form ? f.form.action : null,
              until: Date.now() + 10000};
  }
  function stop(event, expected, actual, how) {
    event.preventDefault();
    push(stopped, {expected, actual, how});
    pinned = null;
  }
  function onClick(event) {
    if (!pinned || !event.isTrusted || Date.now() > pinned.until || !pinned.link) return;
    const path = event.composedPath();
    for (const node of path) {
      if (node === pinned.link) {
        const now = resolve(getAttr(node, "href") || "", node);
        if (originOf(now) !== originOf(pinned.href)) stop(event, pinned.href, now, "link");
        return;
      }
    }
  }
  function onSubmit(event) {
    if (!pinned || Date.now() > pinned.until || !pinned.form || event.target !== pinned.form) return;
    const submitter = event.submitter;
    const attr = (submitter && getAttr(submitter, "formaction")) || getAttr(pinned.form, "action");
    const now = attr && trimText(attr) ? resolve(attr, pinned.form) : docURLOf(ownerDocumentOf(pinned.form));
    if (originOf(now) !== originOf(pinned.action)) stop(event, pinned.action, now, "form");
  }
  function listen() {
    // Registered before any page script: the capture listeners run first; the submit check
    // runs again when the event bubbles back to the window, after the form's own handlers
    // (an inline onsubmit that rewrites the action) and before the browser reads the action.
    // (The Navigation API could stop script-driven navigations too, but Playwright then waits
    // for the cancelled navigation until its timeout.)
    const add = uncurry(EventTarget.prototype.addEventListener);
    add(W, "click", onClick, true);
    add(W, "submit", onSubmit, true);
    add(W, "submit", onSubmit, false);
    watchOverlays(add);
  }
  function report() {
    const out = stopped.splice(0, stopped.length);
    pinned = null;
    return out;
  }

  function locator(els, opts) {
    const one = els.length >= 1 && (els.length === 1 || !opts.strict);
    const f = one ? facts(els[0], opts) : null;
    if (opts.pin && f && (f.href || f.is_submit)) pin(els[0], f);
    return {count: els.length, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
  }

  return Object.freeze({facts, sources, result, atPoint, focused, locator, listen, report});
}
