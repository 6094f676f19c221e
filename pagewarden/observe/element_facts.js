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
  const docByTag = uncurry(Document.prototype.getElementsByTagName);  // live, cached by the browser
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
  const htmlInnerText = getter(HP, "innerText");
  const htmlEditable = getter(HP, "isContentEditable");
  // SVG, MathML and other non-HTML elements have neither: their text content stands in.
  // An HTML element of this or another (same-origin frame's) realm, told by its namespace.
  const elementNamespace = getter(Element.prototype, "namespaceURI");
  const isHTML = (el) => !!el && nodeTypeOf(el) === 1 && elementNamespace(el) === "http://www.w3.org/1999/xhtml";
  const isTag = (el, ...names) => isHTML(el) && names.includes(toLower(tagNameOf(el)));
  const innerTextOf = (el) => isHTML(el) ? htmlInnerText(el) : textContentOf(el);
  const contentEditableOf = (el) => isHTML(el) && htmlEditable(el);
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
    ".message-body", ".review-text", ".usertext-body", "[itemprop=text]",
    "[itemprop=reviewBody]", "[role=comment]", "[itemprop~=comment]", "[itemprop~=review]",
    "[itemprop~=suggestedAnswer]", "[itemprop~=acceptedAnswer]", "[itemtype*='schema.org/Comment']",
    "[itemtype*='schema.org/Review']", "[itemtype*='schema.org/Answer']", "[itemtype*='schema.org/Question']",
    "[itemtype*='DiscussionForumPosting']", "[itemtype*='SocialMediaPosting']", "[itemtype*='UserComments']",
  ];
  // Where a block of text ends for a snippet (not a judgement of who wrote it).
  const BLOCK_SELECTORS = UGC_SELECTORS.concat(["article", "[role=article]", "blockquote"]);
  const DIALOG_SELECTOR = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
  const LANDMARKS = [
    ["main", "main, [role=main]"], ["navigation", "nav, [role=navigation]"],
    ["banner", "header, [role=banner]"], ["contentinfo", "footer, [role=contentinfo]"],
    ["complementary", "aside, [role=complementary]"], ["dialog", DIALOG_SELECTOR],
  ];
  const MAX_CONTEXT = 1200;
  const MAX_TEXT = 400;

  // Elements of a same-origin frame come from another realm: `instanceof` fails there, so the
  // tag name (HTML namespace) stands in for the interface.
  const TAG_OF = new Map([[HTMLInputElement, "input"], [HTMLButtonElement, "button"], [HTMLSelectElement, "select"],
    [HTMLTextAreaElement, "textarea"], [HTMLOutputElement, "output"], [HTMLFieldSetElement, "fieldset"],
    [HTMLObjectElement, "object"], [HTMLMeterElement, "meter"], [HTMLProgressElement, "progress"]]);
  const instanceGet = (table, el, fallback) => {
    for (const [C, get] of table) if (el instanceof C) return get(el);
    if (!isElement(el) || el instanceof Element) return fallback;
    const t = tag(el);
    for (const [C, get] of table) if (TAG_OF.get(C) === t) { try { return get(el); } catch (e) { return fallback; } }
    return fallback;
  };
  // (a composed path ends with the window, which is no node: the getter throws there)
  const isElement = (n) => { try { return !!n && nodeTypeOf(n) === 1; } catch (e) { return false; } };
  const tag = (el) => toLower(tagNameOf(el));
  // What one read has already read: each element's computed style (the live declaration and the
  // values taken from it) and accessible name. The walks over an element's ancestors (visibility,
  // opacity, dialogs, overlays) read the same properties of the same elements; nothing the page
  // does can run in between, within one synchronous read. Made at the start of every read and
  // dropped at its end (`reading`): outside a read, every value is read afresh.
  let memo = null;
  function reading(fn) {
    return function (...args) {
      const outer = memo;
      memo = {styles: new Map(), names: new Map(), posts: new Map()};
      try { return apply(fn, this, args); } finally { memo = outer; }
    };
  }
  const style = (el, name) => {
    if (!memo) return styleValue(computedStyle(W, el), name);
    let known = memo.styles.get(el);
    if (!known) { known = {decl: computedStyle(W, el), values: new Map()}; memo.styles.set(el, known); }
    let value = known.values.get(name);
    if (value === undefined) { value = styleValue(known.decl, name); known.values.set(name, value); }
    return value;
  };

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

  function safeHost(root) { try { return hostOf(root); } catch (e) { return null; } }

  function parentOf(node) {
    const up = parentElementOf(node);
    if (up) return up;
    const root = rootOf(node);
    return root && nodeTypeOf(root) === 11 && root !== node ? safeHost(root) : null;
  }

  function closestAcross(el, selector) {
    for (let node = el; node; node = parentOf(node)) {
      if (isElement(node) && matchesSel(node, selector)) return node;
    }
    return null;
  }

  // -- user content, by what marks it -------------------------------------------------------
  // A tag name says nothing about who wrote a block: product cards, cart lines and news stories
  // are <article>s too. A block is user content when a marker says so (UGC_SELECTORS: a
  // user-content class, schema.org Comment / Review / Answer, role=comment, data-ugc, the policy's
  // own `ugc_selectors`), or when a post-shaped block (an <article>, role=article, a <blockquote>,
  // an articleBody, a class or id naming one comment / reply / review / answer / post / message)
  // carries the marks of a post: a link marked rel=ugc; or an author or a time together with a
  // reply control, rel=nofollow links, siblings of the same shape that carry an author or a time
  // too (repeated posts), or a comments section around it; or any such block inside a comments
  // section. Marks are counted for the nearest post-shaped block or comments section around them,
  // so a story's comment thread does not make the story user content.
  const prevSiblingOf = getter(EP, "previousElementSibling");
  const nextSiblingOf = getter(EP, "nextElementSibling");
  const POST_TOKEN = /^(?:comment|comment-item|reply|review|answer|post|message|forum-post|topic-post)$/i;
  const POST_ID = /^(?:comment|post|reply|review|answer|message)s?[-_]?\d+$/i;
  const SECTION_TOKEN = /^(?:comments|comment[-_]?(?:list|section|area|thread|s)|commentlist|replies|reply[-_]list|responses|discussion|disqus_thread|reviews|review[-_]list|answers|thread)$/i;
  const SECTION_LABEL = /^\s*(?:comments|replies|reviews|discussion|responses|answers)\b/i;
  // (segments of letters and digits between '-' / '_': no two ways to match, no backtracking blow-up)
  const AUTHOR_TOKEN = /^(?:[a-z0-9]+[-_])*(?:author|byline|username|user|poster|commenter|nickname|avatar|handle)(?:[-_][a-z0-9]+)*$/i;
  const REPLY_TOKEN = /^(?:[a-z0-9]+[-_])*repl(?:y|ies)(?:[-_][a-z0-9]+)*$/i;
  const splitText = uncurry(String.prototype.split);
  const splitTokens = (value) => value ? splitText(sliceText(value, 0, 500), /\s+/) : [];
  const anyToken = (el, re) => {
    for (const name of ["class", "id"]) for (const t of splitTokens(getAttr(el, name))) if (t && testRe(re, t)) return true;
    return false;
  };
  function postShaped(el) {
    if (!isHTML(el)) return false;
    const t = tag(el);
    if (t === "article" || t === "blockquote") return true;
    const role = getAttr(el, "role");
    if (role === "article" || role === "comment") return true;
    const itemprop = getAttr(el, "itemprop");
    if (itemprop && testRe(/(?:^|\s)articleBody(?:\s|$)/, itemprop)) return true;
    for (const t2 of splitTokens(getAttr(el, "class"))) if (t2 && testRe(POST_TOKEN, t2)) return true;
    const id = getAttr(el, "id");
    return !!id && testRe(POST_ID, id);
  }
  function commentSection(el) {
    if (!isHTML(el)) return false;
    if (anyToken(el, SECTION_TOKEN)) return true;
    const label = getAttr(el, "aria-label");
    return !!label && testRe(SECTION_LABEL, label);
  }
  function postMarks(block, explicit) {
    // The marks of a post under `block` that belong to it (not to a post or section inside it).
    const known = memo ? memo.posts.get(block) : undefined;
    if (known) return known;
    const marks = {author: false, time: false, reply: false, ugcLink: false, nofollow: false};
    const owned = (n) => {
      for (let up = parentOf(n); up && up !== block; up = parentOf(up)) {
        if (isElement(up) && (postShaped(up) || commentSection(up) || matchesSel(up, explicit))) return false;
      }
      return true;
    };
    scanRegion(block, (n) => {
      if (!isHTML(n)) return true;
      const t = tag(n);
      const rel = t === "a" || t === "link" ? toLower(getAttr(n, "rel") || "") : "";
      const itemprop = getAttr(n, "itemprop") || "";
      const author = testRe(/(?:^|\s)author(?:\s|$)/, rel) || testRe(/(?:^|\s)(?:author|creator)(?:\s|$)/, itemprop) ||
        hasAttr(n, "data-author") || hasAttr(n, "data-user") || hasAttr(n, "data-username") || anyToken(n, AUTHOR_TOKEN);
      const time = t === "time" || hasAttr(n, "datetime");
      const reply = anyToken(n, REPLY_TOKEN) ||
        ((t === "a" || t === "button") && testRe(/^\s*(?:reply|respond|quote)\b/i, textOf(n, 40)));
      const ugcLink = testRe(/(?:^|\s)ugc(?:\s|$)/, rel);
      const nofollow = testRe(/(?:^|\s)nofollow(?:\s|$)/, rel);
      if (!(author || time || reply || ugcLink || nofollow) || !owned(n)) return true;
      if (author) marks.author = true;
      if (time) marks.time = true;
      if (reply) marks.reply = true;
      if (ugcLink) marks.ugcLink = true;
      if (nofollow) marks.nofollow = true;
      return !(marks.author && marks.time && marks.reply && marks.ugcLink);
    });
    if (memo) memo.posts.set(block, marks);
    return marks;
  }
  function sameShape(a, b) {
    return isHTML(b) && tag(a) === tag(b) && (getAttr(a, "class") || "") === (getAttr(b, "class") || "") &&
      (getAttr(a, "role") || "") === (getAttr(b, "role") || "");
  }
  function repeatedPost(block, explicit) {
    // A sibling of the same shape (or, for a post wrapped alone in a list item, the list item's)
    // that carries an author or a time of its own.
    let node = block;
    const up = parentOf(block);
    if (up && isElement(up) && prevSiblingOf(block) === null && nextSiblingOf(block) === null && tag(up) === "li") node = up;
    for (const step of [prevSiblingOf, nextSiblingOf]) {
      let sib = step(node);
      for (let i = 0; sib && i < 3; i++, sib = step(sib)) {
        if (!sameShape(node, sib)) continue;
        const post = node === block ? sib : firstElementChildOf(sib);
        if (!post || !sameShape(block, post)) continue;
        const marks = postMarks(post, explicit);
        if (marks.author || marks.time) return true;
      }
    }
    return false;
  }
  function inCommentSection(block) {
    let i = 0;
    for (let up = parentOf(block); up && i < 6; up = parentOf(up), i++) if (isElement(up) && commentSection(up)) return true;
    return false;
  }
  function postEvidence(block, explicit) {
    // Why `block` (post-shaped) is user content, or "" when nothing marks it.
    const marks = postMarks(block, explicit);
    if (marks.ugcLink) return "rel=ugc links";
    if (inCommentSection(block)) return "inside a comments section";
    if (!(marks.author || marks.time)) return "";
    const who = marks.author ? "an author" : "a time";
    if (marks.reply) return who + " and a reply control";
    if (marks.nofollow) return who + " and rel=nofollow links";
    if (repeatedPost(block, explicit)) return who + ", repeated like its siblings";
    return "";
  }
  function ugcRegion(el, extra) {
    // The user-content block around `el`: {node, hit} (hit: the marker or the marks), or null.
    const list = UGC_SELECTORS.concat(extra || []);
    const explicit = joinList(list, ", ");
    let weighed = 0;
    for (let node = el; node; node = parentOf(node)) {
      if (!isElement(node)) continue;
      if (matchesSel(node, explicit)) {
        for (const s of list) {
          try { if (matchesSel(node, s)) return {node, hit: s}; } catch (e) { /* invalid custom selector */ }
        }
        return {node, hit: null};
      }
      if (weighed < 6 && postShaped(node)) {
        weighed++;
        const why = postEvidence(node, explicit);
        if (why) return {node, hit: tag(node) + ": " + why};
      }
    }
    // A link the site marks rel=ugc outside any post-shaped block: its paragraph or list item.
    const link = closestAcross(el, "a[rel~=ugc], area[rel~=ugc]");
    if (link) return {node: closestAcross(link, "p, li, div, section") || link, hit: "rel=ugc link"};
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
    if (contentEditableOf(el)) return "textbox";
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
    // A <button> whose type is missing or invalid (`type=bogus`) is a submit button.
    const t = tag(el);
    const type = toLower(trimText(getAttr(el, "type") || ""));
    if (t === "button") return type !== "button" && type !== "reset";
    if (t === "input") return type === "submit" || type === "image";
    return false;
  }

  function resolve(url, el) {
    try { return new URL_(url, baseURIOf(el)).href; } catch (e) { return url; }
  }

  function formOf(el) {
    return instanceGet(formGetters, el, null) || closestAcross(el, "form");
  }

  function formFacts(el, submitter, withFields) {
    // Where the form posts; the fields it would carry only when the action submits it (their
    // number and size grow with the form, and only a submission sends them).
    const form = formOf(el);
    if (!form) return null;
    const attr = (submitter && getAttr(submitter, "formaction")) || getAttr(form, "action");
    const explicit = attr !== null && trimText(attr) !== "";
    const action = explicit ? resolve(attr, el) : docURLOf(ownerDocumentOf(el));
    const method = toLower((submitter && getAttr(submitter, "formmethod")) || getAttr(form, "method") || "get");
    const target = (submitter && getAttr(submitter, "formtarget")) || getAttr(form, "target") || null;
    const fields = [];
    let n = withFields === false ? 60 : 0;
    for (const f of withFields === false ? [] : formElementsOf(form)) {
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

  // How far a scan of a region (a user-content block, a dialog, an overlay, a container) looks:
  // its first REGION_SCAN elements in tree order. A region as large as the page (an <article> or
  // a fixed shell around everything, a list of 10,000 rows) then costs what a small one does;
  // its text is capped the same way (the first characters from its start).
  const REGION_SCAN = 600;
  const SHOW_ELEMENT = NodeFilter.SHOW_ELEMENT;
  function scanRegion(root, visit) {
    // `visit` each element under `root` (not itself) in tree order, until it answers false.
    const walker = makeWalker(ownerDocumentOf(root) || document, root, SHOW_ELEMENT);
    let seen = 0;
    for (let el = walkNext(walker); el && seen < REGION_SCAN; el = walkNext(walker)) {
      seen++;
      if (visit(el) === false) break;
    }
  }
  function textLonger(node, limit) {
    // Whether `node`'s text content is longer than `limit`, without building that text: a walk
    // that stops at the limit, or after 4 × REGION_SCAN nodes (a container that large is long).
    const walker = makeWalker(ownerDocumentOf(node) || document, node, SHOW_ELEMENT | SHOW_TEXT);
    let size = 0, seen = 0;
    for (let n = walkNext(walker); n; n = walkNext(walker)) {
      if (++seen > REGION_SCAN * 4) return true;
      if (nodeTypeOf(n) !== 1) { size += (nodeValueOf(n) || "").length; if (size > limit) return true; }
    }
    return false;
  }

  const ARIA_TEXT_SELECTOR = "[aria-label],[title],[alt],[aria-description]";
  function neighbourhood(el, ugc, dialog) {
    let node = ugc || dialog;
    if (!node) {
      // The nearest container with some text, but not one so large it is the whole page.
      node = el;
      for (let i = 0; i < 6 && parentOf(node); i++) {
        const up = parentOf(node);
        if (!isElement(up) || testRe(/^(BODY|HTML|MAIN)$/, tagNameOf(up)) || textLonger(up, 1500)) break;
        node = up;
        // (a paragraph as short as a lone link is not the text around it: its container is)
        if (textLonger(node, 160) || testRe(/^(LI|TD|SECTION|ARTICLE|FORM|ASIDE|HEADER|FOOTER)$/, tagNameOf(node))) break;
      }
    }
    // Hidden text is included on purpose: injections hide there.
    const text = textOf(node, MAX_CONTEXT * 2);
    const extras = [];
    scanRegion(node, (child) => {
      if (!matchesSel(child, ARIA_TEXT_SELECTOR)) return true;
      push(extras, ariaText(child));
      return extras.length <= 20;
    });
    const unseen = unseenText(node);
    return clip((unseen ? unseen + " | " : "") + text + (extras.length ? " | " + joinList(extras, " | ") : ""),
      MAX_CONTEXT);
  }

  // Text a walk of the DOM's text nodes misses but the page shows (or a screen reader reads):
  // CSS generated content (::before / ::after, `attr()` resolved), open shadow roots, and
  // same-origin frames. Bounded: the first 60 elements of the region (and, for generated text
  // and frames, the first REGION_SCAN).
  const matchAll = (text) => { const out = []; const re = /"((?:[^"\\]|\\.)*)"/g; let m; while ((m = re.exec(text))) push(out, m[1]); return out; };
  function generatedText(el) {
    const parts = [];
    for (const which of ["::before", "::after"]) {
      let value = "";
      try { value = styleValue(computedStyle(W, el, which), "content"); } catch (e) { value = ""; }
      if (!value || value === "none" || value === "normal") continue;
      for (const part of matchAll(value)) push(parts, replaceText(part, /\\(.)/g, "$1"));
    }
    return joinList(parts, "");
  }
  // Which elements can carry generated text: the selectors of ::before / ::after rules that set
  // `content`, from one pass over the document's readable style sheets per DOM version. A sheet
  // that cannot be read (another origin's, nested rules) leaves every element to be checked.
  let pseudoIndex = null;
  const styleSheetsOf = getter(Document.prototype, "styleSheets");
  function pseudoRules(doc) {
    if (doc !== document) return {selector: null, all: true};
    // Cached while the set of sheets and their rule counts stay the same (a new <style>, an
    // insertRule, a removed sheet start a new pass).
    let key = "";
    let sheets = [];
    try {
      sheets = styleSheetsOf(doc);
      for (const sheet of sheets) { let n = -1; try { n = sheet.cssRules.length; } catch (e) { n = -1; } key += n + ","; }
    } catch (e) { return {selector: null, all: true}; }
    if (pseudoIndex && pseudoIndex.key === key) return pseudoIndex;
    const selectors = [];
    let all = false, seen = 0;
    const walkRules = (rules, depth) => {
      for (const rule of rules) {
        if (++seen > 20000 || depth > 4) { all = true; return; }
        const text = rule.selectorText;
        if (!text) {
          let inner = null;
          try { inner = rule.cssRules; } catch (e) { inner = null; }
          if (inner) walkRules(inner, depth + 1);
          continue;
        }
        if (!testRe(/::?(?:before|after)\b/i, text)) continue;
        const content = rule.style ? styleValue(rule.style, "content") : "";
        if (!content || content === "none" || content === "normal") continue;
        push(selectors, trimText(replaceText(text, /::?(?:before|after)\b/gi, "")) || "*");
      }
    };
    for (const sheet of sheets) {
      let rules = null;
      try { rules = sheet.cssRules; } catch (e) { all = true; continue; }
      if (rules) walkRules(rules, 0);
    }
    pseudoIndex = {key, selector: selectors.length ? joinList(selectors, ", ") : null, all};
    return pseudoIndex;
  }
  function unseenText(node) {
    const parts = [];
    let size = 0;
    const add = (text) => { text = trimText(text); if (text && size < MAX_CONTEXT) { push(parts, text); size += text.length; } };
    const doc = ownerDocumentOf(node) || document;
    const rules = pseudoRules(doc);
    let carriers = null;  // null: unknown, every element walked may carry generated text
    if (!rules.all) {
      carriers = [];
      if (rules.selector) {
        try {
          if (matchesSel(node, rules.selector)) push(carriers, node);
          scanRegion(node, (el) => {
            if (matchesSel(el, rules.selector)) push(carriers, el);
            return carriers.length < 60;
          });
        } catch (e) { carriers = null; }
      }
    }
    if (carriers !== null) for (const el of carriers) add(generatedText(el));
    const walker = makeWalker(doc, node, SHOW_ELEMENT);
    let seen = 0;
    for (let el = node; el && seen < 60 && size < MAX_CONTEXT; el = walkNext(walker)) {
      seen++;
      if (carriers === null) add(generatedText(el));
      const root = shadowRootOf(el);
      if (root) add(textOf(root, 400));
    }
    let frames = 0;
    scanRegion(node, (el) => {
      if (size >= MAX_CONTEXT) return false;
      if (!matchesSel(el, "iframe, frame, object")) return true;
      if (++frames > 4) return false;
      const inner = frameParts(el)[1];
      const body = inner ? bodyOf(inner) : null;
      if (body) add(textOf(body, 400));
      return true;
    });
    return joinList(parts, " | ");
  }


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

  // -- activation: what the action will really activate -----------------------------------
  // The browser does not activate the element the agent pointed at but the one its click
  // point hits (overlays, children, iframes), walked up the flat tree (slots, shadow hosts)
  // to the nearest element with an activation behaviour: a link, a submit button (a <label>
  // passes the click to its control), or, for keys, what Enter / Space do on the focused
  // element (a link follows, a button clicks, a field submits its form implicitly through
  // the form's default button).
  const parentNodeOf = getter(NP, "parentNode");
  const elementSlotOf = getter(EP, "assignedSlot");
  const textSlotOf = getter(Text.prototype, "assignedSlot");
  const clientRectsOf = uncurry(EP.getClientRects);
  const clientLeftOf = getter(EP, "clientLeft");
  const clientTopOf = getter(EP, "clientTop");
  const contentWindowOf = getter(HTMLIFrameElement.prototype, "contentWindow");
  // Every element that holds a nested document: <iframe>, <frame>, <object>, <embed>.
  const FRAME_TAGS = ["iframe", "frame", "object", "embed"];
  const frameGetters = [[HTMLIFrameElement, "iframe"], [W.HTMLFrameElement, "frame"], [HTMLObjectElement, "object"]]
    .filter(([C]) => !!C)
    .map(([C, t]) => [t, getter(C.prototype, "contentWindow"), getter(C.prototype, "contentDocument")]);
  const isFrameEl = (el) => isHTML(el) && FRAME_TAGS.includes(tag(el));
  function frameParts(el) {
    // [window, document] of a nested document the reader may enter (same origin), else nulls.
    const t = tag(el);
    for (const [name, win, doc] of frameGetters) {
      if (name !== t) continue;
      try { return [win(el), doc(el)]; } catch (e) { return [null, null]; }
    }
    return [null, null];  // <embed>: its document is never entered
  }
  const frameSrc = (el) => getAttr(el, tag(el) === "object" ? "data" : "src") || "about:blank";
  const buttonTypeOf = getter(HTMLButtonElement.prototype, "type");
  const scrollIntoViewIfNeeded = EP.scrollIntoViewIfNeeded ? uncurry(EP.scrollIntoViewIfNeeded) : null;
  const XLINK = "http://www.w3.org/1999/xlink";
  const getAttrNS = uncurry(EP.getAttributeNS);
  const namespaceOf = getter(EP, "namespaceURI");
  const HTML_NS = "http://www.w3.org/1999/xhtml";

  function flatParent(node) {
    // The parent in the flat tree: the slot a node is assigned to, a shadow root's host.
    const type = nodeTypeOf(node);
    const slot = type === 1 ? elementSlotOf(node) : (type === 3 ? textSlotOf(node) : null);
    if (slot) return slot;
    const up = parentNodeOf(node);
    if (!up) return null;
    if (nodeTypeOf(up) === 11) { try { return hostOf(up); } catch (e) { return null; } }
    return nodeTypeOf(up) === 1 ? up : null;
  }

  function linkHref(el) {
    // The raw href of a link element (HTML <a>/<area>, SVG <a> with href or xlink:href).
    const t = tag(el);
    if (t !== "a" && t !== "area") return null;
    const raw = getAttr(el, "href");
    if (raw !== null) return raw;
    return namespaceOf(el) !== HTML_NS ? getAttrNS(el, XLINK, "href") : null;
  }

  function disabled(el) {
    return !!instanceGet(disabledGetters, el, false);
  }

  function submitterOk(el) {
    if (!isSubmitter(el) || disabled(el)) return false;
    if (tag(el) === "button") { try { if (buttonTypeOf(el) !== "submit") return false; } catch (e) { /* realm */ } }
    return !!formOf(el);
  }

  // Roles that make an element the control a click is for (an icon-only `<div role=button>`).
  const WIDGET_ROLES = /^(?:button|link|menuitem|menuitemcheckbox|menuitemradio|tab|checkbox|radio|switch|option|treeitem)$/;

  function chain(start) {
    // Walk up the flat tree from `start`: the nearest link and submit button, and the label
    // whose control a click passes to (when no interactive element sits between).
    let link = null, submitter = null, label = null, interactive = null;
    for (let n = start; n; n = flatParent(n)) {
      if (!isElement(n)) continue;
      const t = tag(n);
      if (!link && linkHref(n) !== null) link = n;
      if (!submitter && isSubmitter(n) && submitterOk(n)) submitter = n;
      if (!interactive && (t === "button" || t === "input" || t === "select" || t === "textarea" || t === "summary" ||
          linkHref(n) !== null || testRe(WIDGET_ROLES, toLower(getAttr(n, "role") || "")))) interactive = n;
      if (!label && !interactive && t === "label") label = n;
    }
    return {link, submitter, label, interactive};
  }

  function resolveActivation(start, how) {
    // The element a click on `start` activates, with the link and submit button it reaches.
    let c = chain(start);
    let via = how;
    if (c.label && !c.link && !c.submitter) {
      let control = null;
      try { control = controlOf(c.label); } catch (e) { control = null; }
      if (control && control !== start) {
        const inner = chain(control);
        c = {link: c.link || inner.link, submitter: inner.submitter, label: c.label, interactive: inner.interactive};
        via = (how ? how + ", " : "") + "label passes the click to its control";
        start = control;
      }
    }
    // A click on an icon inside a control (an SVG `<use>`, an icon font's `<i>`) is the control's:
    // the nearest interactive ancestor, with its accessible name, is what the action acts on.
    const main = c.submitter || c.link || c.interactive || start;
    if (main !== start && main === c.interactive && !c.link && !c.submitter) {
      via = (via ? via + ", " : "") + "the click is on an element inside the control";
    }
    return {el: main, link: c.link, submitter: c.submitter, via};
  }

  function areaAt(img, x, y) {
    // The <area> of an image map under viewport point (x, y).
    const name = replaceText(getAttr(img, "usemap") || "", /^#/, "");
    if (!name) return null;
    const doc = ownerDocumentOf(img);
    let map = null;
    for (const m of docByTag(doc, "map")) {
      if (getAttr(m, "name") === name || getAttr(m, "id") === name) { map = m; break; }
    }
    if (!map) return null;
    const r = rectOf(img);
    const px = x - r.left, py = y - r.top;
    let fallback = null;
    for (const area of queryAll(map, "area")) {
      const shape = toLower(getAttr(area, "shape") || "rect");
      const c = (getAttr(area, "coords") || "").split(/[\s,]+/).filter((v) => v !== "").map(Number);
      if (shape === "default") { fallback = fallback || area; continue; }
      if ((shape === "rect" || shape === "rectangle") && c.length >= 4) {
        if (px >= Math.min(c[0], c[2]) && px <= Math.max(c[0], c[2]) && py >= Math.min(c[1], c[3]) && py <= Math.max(c[1], c[3])) return area;
      } else if ((shape === "circle" || shape === "circ") && c.length >= 3) {
        if ((px - c[0]) ** 2 + (py - c[1]) ** 2 <= c[2] ** 2) return area;
      } else if ((shape === "poly" || shape === "polygon") && c.length >= 6) {
        let inside = false;
        for (let i = 0, j = c.length - 2; i < c.length; j = i, i += 2) {
          const xi = c[i], yi = c[i + 1], xj = c[j], yj = c[j + 1];
          if (((yi > py) !== (yj > py)) && (px < (xj - xi) * (py - yi) / ((yj - yi) || 1e-9) + xi)) inside = !inside;
        }
        if (inside) return area;
      }
    }
    return fallback;
  }

  const caretAt = Document.prototype.caretPositionFromPoint ? uncurry(Document.prototype.caretPositionFromPoint) : null;
  const caretNodeOf = W.CaretPosition ? getter(CaretPosition.prototype, "offsetNode") : null;
  function slottedTextAt(doc, root, x, y, host) {
    if (!caretAt || !caretNodeOf) return null;
    let node = null;
    try { const caret = caretAt(doc, x, y, {shadowRoots: [root]}); node = caret ? caretNodeOf(caret) : null; } catch (e) { return null; }
    if (!node || nodeTypeOf(node) !== 3 || parentNodeOf(node) !== host) return null;
    return textSlotOf(node);
  }

  function hitAt(doc, x, y) {
    // The deepest element at viewport point (x, y) of `doc`, through open shadow roots.
    let el = fromPoint(doc, x, y);
    while (el && shadowFromPoint && shadowRootOf(el)) {
      const root = shadowRootOf(el);
      const inner = shadowFromPoint(root, x, y);
      if (!inner || inner === el) {
        // Text of the host's own (light) children, rendered through a slot: hit-testing
        // stops at the host, but the click goes up through the slot.
        const slot = slottedTextAt(doc, root, x, y, el);
        if (slot) el = slot;
        break;
      }
      el = inner;
    }
    if (el && tag(el) === "img" && hasAttr(el, "usemap")) {
      const area = areaAt(el, x, y);
      if (area) return area;
    }
    return el;
  }

  // A closed shadow root is out of every script's reach but the browser's: the click lands on
  // what it renders while hit-testing stops at its host. A host with no open root, hit where
  // the caret finds none of its own (light) content, may be showing a closed root's content
  // there: the guard then reads that point over CDP (`shadow_probe`).
  const SHADOW_HOSTS = {__proto__: null, article: 1, aside: 1, blockquote: 1, body: 1, div: 1, footer: 1, h1: 1,
    h2: 1, h3: 1, h4: 1, h5: 1, h6: 1, header: 1, main: 1, nav: 1, p: 1, section: 1, span: 1};
  const caretRange = Document.prototype.caretRangeFromPoint ? uncurry(Document.prototype.caretRangeFromPoint) : null;
  const rangeStartOf = getter(Range.prototype, "startContainer");
  function closedShadowAt(el, doc, x, y) {
    if (!el || doc !== document || shadowRootOf(el)) return null;
    const t = tag(el);
    if (SHADOW_HOSTS[t] !== 1 && indexOf(t, "-") < 0) return null;
    let node = null;
    try { const r = caretRange ? caretRange(doc, x, y) : null; node = r ? rangeStartOf(r) : null; } catch (e) { node = null; }
    for (let n = node; n; n = flatParent(n)) if (n === el) return null;  // its own light content
    return Math.round(x * 100) / 100 + "," + Math.round(y * 100) / 100;
  }

  function clickPoint(el, opts) {
    // Where Playwright clicks: `position` from the padding box's top-left corner, else the
    // centre of the first box of the element that shows in the viewport (scrolled into view
    // first, as Playwright does).
    let r = rectOf(el);
    const outside = (rect) => rect.bottom < 0 || rect.right < 0 || rect.top > innerH() || rect.left > innerW();
    if (outside(r) && scrollIntoViewIfNeeded) { try { scrollIntoViewIfNeeded(el, true); r = rectOf(el); } catch (e) { /* */ } }
    const pos = opts.position;
    if (pos && typeof pos.x === "number" && typeof pos.y === "number") {
      return {x: r.left + clientLeftOf(el) + pos.x, y: r.top + clientTopOf(el) + pos.y};
    }
    for (const box of clientRectsOf(el)) {
      const left = Math.max(box.left, 0), top = Math.max(box.top, 0);
      const right = Math.min(box.right, innerW()), bottom = Math.min(box.bottom, innerH());
      if ((right - left) * (bottom - top) > 0.99) return {x: (left + right) / 2, y: (top + bottom) / 2};
    }
    return {x: r.left + r.width / 2, y: r.top + r.height / 2};
  }

  function containsFlat(outer, node) {
    for (let n = node; n; n = flatParent(n)) if (n === outer) return true;
    // An image map's <area> is hit over the <img> that uses the map.
    if (tag(node) === "area" && tag(outer) === "img" && hasAttr(outer, "usemap")) {
      const map = closestAcross(node, "map");
      const name = replaceText(getAttr(outer, "usemap") || "", /^#/, "");
      return !!map && (getAttr(map, "name") === name || getAttr(map, "id") === name);
    }
    return false;
  }

  function intoFrame(frameEl, x, y, opts) {
    // A point over an <iframe>: hit-test inside it. Same-origin: its own installed reader
    // answers (its elements belong to another realm); cross-origin: unknown content of its origin.
    const r = rectOf(frameEl);
    const fx = x - r.left - clientLeftOf(frameEl), fy = y - r.top - clientTopOf(frameEl);
    let win = null, doc = null;
    [win, doc] = frameParts(frameEl);
    const inner = {...opts, x: fx, y: fy, position: null, frame_depth: (opts.frame_depth || 0) + 1};
    if (doc && win && opts.lib && inner.frame_depth < 5) {
      let lib = null;
      try { lib = win[opts.lib]; } catch (e) { lib = null; }
      if (lib && lib.atPoint) return {delegated: lib.atPoint(inner)};
    }
    if (doc && inner.frame_depth < 5) {
      // No reader of its own there yet: hit-test its document from here.
      const hit = hitAt(doc, fx, fy);
      if (hit && isFrameEl(hit)) return intoFrame(hit, fx, fy, inner);
      if (hit) return {hit};
    }
    const src = frameSrc(frameEl);
    let origin = "null";
    try { origin = doc ? new URL_(docURLOf(doc)).origin : new URL_(resolve(src, frameEl)).origin; } catch (e) { /* */ }
    return {frame: doc ? docURLOf(doc) : resolve(src, frameEl), frame_origin: origin};
  }

  // Elements that can hold nothing another element could be hit on: no element children, no
  // shadow root (open, or closed: only these tags and custom elements can host one), no nested
  // document, no image map, HTML. Without `force` a click on one activates what the hit test on
  // it would find, itself (Playwright waits for anything on top to go away), so its activation
  // needs no hit test, and no scroll into view: a scroll before Playwright's own actionability
  // checks makes the page paint a new frame that the click's stability check then waits for.
  const firstElementChildOf = getter(EP, "firstElementChild");
  const NOT_LEAVES = ["img", "area", "map", "svg", "math"];
  function landsOnItself(el) {
    if (!isHTML(el) || firstElementChildOf(el) !== null || shadowRootOf(el)) return false;
    const t = tag(el);
    return SHADOW_HOSTS[t] !== 1 && indexOf(t, "-") < 0 && !isFrameEl(el) && !NOT_LEAVES.includes(t);
  }

  function clickActivation(el, opts) {
    // What a click on `el` (Playwright's click point, `force`, overlays) activates.
    if (opts.activate.dispatch) return resolveActivation(el, "");
    if (!opts.activate.force && landsOnItself(el)) return resolveActivation(el, "");
    const point = clickPoint(el, opts);
    const doc = ownerDocumentOf(el);
    let hit = hitAt(doc, point.x, point.y);
    let how = "";
    if (hit && hit !== el && !containsFlat(el, hit)) {
      // Something else is on top. Playwright waits for it to go away unless `force`, in which
      // case the browser clicks whatever is there.
      if (!opts.activate.force) hit = el;
      else how = "hit at the click point (force)";
    } else if (hit && hit !== el) {
      how = "hit at the click point";
    }
    if (!hit) hit = el;
    if (isFrameEl(hit)) {
      const inner = intoFrame(hit, point.x, point.y, opts);
      if (inner.delegated) return {delegated: inner.delegated};
      if (inner.hit) return resolveActivation(inner.hit, "the click lands in a frame");
      return {el: hit, link: null, submitter: null, via: "the click lands in a frame", frame: inner};
    }
    const act = resolveActivation(hit, how);
    if (!act.link && !act.submitter) act.probe = closedShadowAt(hit, doc, point.x, point.y);
    return act;
  }

  function defaultButton(form) {
    for (const f of formElementsOf(form)) if (isSubmitter(f)) return f;
    return null;
  }

  function keyActivation(el, opts) {
    // What a key does on the focused element `el`.
    const key = opts.activate.key;
    const t = tag(el);
    const type = t === "input" ? toLower(getAttr(el, "type") || "text") : "";
    const buttonLike = t === "button" || (t === "input" && ["submit", "image", "reset", "button"].includes(type));
    if (key === "Enter") {
      if (linkHref(el) !== null || buttonLike || t === "summary") return resolveActivation(el, "Enter on the focused element");
      if (t === "input" && !disabled(el)) {
        const form = formOf(el);
        if (!form) return null;
        const button = defaultButton(form);
        if (button) {
          if (disabled(button)) return null;
          const act = resolveActivation(button, "Enter submits the form through its default button");
          act.submitter = act.submitter || (submitterOk(button) ? button : null);
          return act;
        }
        return {el, link: null, submitter: null, form, via: "Enter submits the form (implicit submission)"};
      }
      return null;
    }
    if (key === "Space") {
      if (buttonLike || t === "summary" || (t === "input" && (type === "checkbox" || type === "radio"))) {
        return resolveActivation(el, "Space on the focused element");
      }
    }
    return null;
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

  // Page-wide searches are cached until the DOM changes in a way that matters to them. A mutation
  // observer sorts the changes (records not yet delivered are taken at each read, so a change
  // just before it counts): any change at all (`domVersion`), text (characters, child lists:
  // `textVersion`), the element tree (elements added or removed: `treeVersion`), and a log of
  // what changed (below) from which the page-wide indexes are brought up to date.
  let domVersion = 0, textVersion = 0, treeVersion = 0;
  const sourceCache = new Map();
  let observing = false;
  let changes = null;
  const takeRecords = uncurry(MutationObserver.prototype.takeRecords);
  const recordTypeOf = getter(MutationRecord.prototype, "type");
  const recordAttrOf = getter(MutationRecord.prototype, "attributeName");
  const addedNodesOf = getter(MutationRecord.prototype, "addedNodes");
  const removedNodesOf = getter(MutationRecord.prototype, "removedNodes");
  const listLength = getter(NodeList.prototype, "length");
  const listItem = uncurry(NodeList.prototype.item);
  const hasElement = (list) => {
    for (let i = 0, n = listLength(list); i < n; i++) if (nodeTypeOf(listItem(list, i)) === 1) return true;
    return false;
  };
  // What changed, for the caches that are brought up to date instead of made anew (the indexes of
  // labels, link targets, labelling attributes and the page's text): a log of nodes added, text
  // changed, and the attributes those indexes read changed. A cache keeps the log position it has
  // seen and takes in what came after it: a node added has its subtree looked at, an element whose
  // attribute changed is looked at again. The log keeps at most LOG_KEPT entries; a cache further
  // behind (a page that changes constantly) is made anew. What an index holds can be stale (an
  // element since removed, an attribute changed again): every use checks it against the live DOM,
  // so an index may name more than there is, never less.
  const LOG_KEPT = 2048;
  const LOGGED_ATTRS = {__proto__: null, href: 1, action: 1, for: 1, "aria-label": 1, title: 1,
    "aria-description": 1, alt: 1, placeholder: 1};
  const changeLog = [];
  let logStart = 0;  // the position of changeLog[0] among every change logged
  let logTaken = 0;  // the log up to here has been taken in by some cache
  const recordTargetOf = getter(MutationRecord.prototype, "target");
  function logChange(kind, node, name) {
    const n = changeLog.length;
    const last = n ? changeLog[n - 1] : null;
    // The same change of the same node again, not yet taken in by any cache: what the cache will
    // read then is the node as it is then (once taken in, a change is logged again).
    if (last && logStart + n - 1 >= logTaken && last[0] === kind && last[1] === node && last[2] === name) return;
    if (n >= LOG_KEPT) { logStart += n; changeLog.length = 0; }
    push(changeLog, [kind, node, name]);
  }
  function logEnd() {
    // The position a cache made or brought up to date now has seen the log to.
    const end = logStart + changeLog.length;
    if (end > logTaken) logTaken = end;
    return end;
  }
  function catchUp(pos, take) {
    // `take` each change logged since `pos` (false: they are no longer all in the log). An added
    // node is taken once, only while it is in the page, and not when a node around it is taken
    // too: its subtree is read as it is now, and the subtrees read are apart, so catching up
    // never reads more of the page than making the index anew would (a page adding and removing
    // the same large subtree a thousand times between two reads costs one read of it).
    if (pos < logStart) return false;
    const added = new Set_();
    for (let i = pos - logStart, n = changeLog.length; i < n; i++) {
      const change = changeLog[i];
      if (change[0] !== "add") take(change);
      else if (isConnectedOf(change[1])) added.add(change[1]);
    }
    for (const node of added) {
      let inside = false;
      for (let up = parentNodeOf(node); up && !inside; up = parentNodeOf(up)) inside = added.has(up);
      if (!inside) take(["add", node, null]);
    }
    return true;
  }
  function noteChanges(records) {
    if (!records.length) return;
    domVersion++;
    let text = false, tree = false;
    for (const record of records) {
      const type = recordTypeOf(record);
      if (type === "attributes") {
        const name = recordAttrOf(record);
        if (LOGGED_ATTRS[name] === 1) logChange("attr", recordTargetOf(record), name);
        continue;
      }
      text = true;
      if (type !== "childList") { logChange("text", recordTargetOf(record), null); continue; }
      const added = addedNodesOf(record);
      for (let i = 0, n = listLength(added); i < n; i++) logChange("add", listItem(added, i), null);
      if (!tree) tree = hasElement(added) || hasElement(removedNodesOf(record));
    }
    if (text) textVersion++;
    if (tree) treeVersion++;
  }
  function eachIn(node, selector, fn) {
    // `fn` on `node` and each element under it matching `selector` (a node added to the page).
    if (!isElement(node)) return;
    if (matchesSel(node, selector)) fn(node);
    if (firstElementChildOf(node) !== null) for (const el of queryAll(node, selector)) fn(el);
  }
  function addTo(map, key, el) {
    // `el` into the list of `key` (once).
    const list = map.get(key);
    if (!list) { map.set(key, [el]); return; }
    for (let i = 0; i < list.length; i++) if (list[i] === el) return;
    push(list, el);
  }
  function observeChanges() {
    if (observing) {
      noteChanges(takeRecords(changes));
      return;
    }
    observing = true;
    try {
      changes = new MutationObserver(noteChanges);
      changes.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
    } catch (e) { observing = false; }
  }

  // What the page-wide search reads: the body's text in lower case, the elements carrying link
  // targets, and those carrying labelling attributes. A search is then a scan of strings, not a
  // selector run over every element.
  const LABEL_ATTRS = ["aria-label", "title", "aria-description", "alt"];
  // `links` / `labels`: [element, its lower-case targets / labels] as they were when indexed, and
  // `linksText` / `labelsText` all of those in one string, so a search for a value none of them
  // carries is one native scan, not one per element. `text`: the body's text in lower case when
  // indexed, and `dirty` the nodes whose text changed or which were added since (at most
  // DIRTY_KEPT nodes and about DIRTY_CHARS characters, else the text is read again): a value in
  // neither is nowhere in the page's text.
  // Changes are taken in from the change log (elements added, href / action / labelling attributes
  // changed: entries added; removed elements stay until the index is made anew, and each match is
  // checked against the live element).
  let pageIndex = null;
  const LINK_SELECTOR = "[href], [action]";
  const LABEL_SELECTOR = "[aria-label], [title], [aria-description], [alt]";
  const DIRTY_KEPT = 256, DIRTY_CHARS = 65536;
  function linkEntry(index, el) {
    const href = getAttr(el, "href"), action = getAttr(el, "action");
    const entry = [el, toLower(href || ""), toLower(action || "")];
    push(index.links, entry);
    return entry[1] + "\u0000" + entry[2];
  }
  function labelEntry(index, el) {
    let lowered = "";
    for (const name of LABEL_ATTRS) { const v = getAttr(el, name); if (v) lowered += toLower(v) + "\u0000"; }
    push(index.labels, [el, lowered]);
    return lowered;
  }
  function indexOfPage(doc, body) {
    let index = observing && pageIndex && pageIndex.body === body ? pageIndex : null;
    if (index) {
      let links = "", labels = "";
      const fresh = catchUp(index.pos, ([kind, node, name]) => {
        if (kind === "attr") {
          if (!isElement(node)) return;
          if (name === "href" || name === "action") links += "\u0000" + linkEntry(index, node);
          else if (name === "aria-label" || name === "title" || name === "aria-description" || name === "alt") {
            labels += "\u0000" + labelEntry(index, node);
          }
          return;
        }
        if (index.dirty.size <= DIRTY_KEPT && index.dirtyChars <= DIRTY_CHARS && !index.dirty.has(node)) {
          index.dirty.add(node);
          const text = nodeTypeOf(node) === 1 ? textContentOf(node) : nodeValueOf(node);
          index.dirtyChars += text ? text.length : 0;
        }
        if (kind !== "add" || !isElement(node)) return;
        eachIn(node, LINK_SELECTOR, (el) => { links += "\u0000" + linkEntry(index, el); });
        eachIn(node, LABEL_SELECTOR, (el) => { labels += "\u0000" + labelEntry(index, el); });
      });
      // (entries added since the index was made: at most as many again as it had, plus some)
      if (!fresh || index.links.length > 2 * index.made + 4096 || index.labels.length > 2 * index.made + 4096) index = null;
      else {
        index.pos = logEnd();
        index.linksText += links;
        index.labelsText += labels;
        if (index.dirty.size > DIRTY_KEPT || index.dirtyChars > DIRTY_CHARS) {
          index.text = toLower(textContentOf(body) || "");
          index.dirty = new Set_();
          index.dirtyChars = 0;
        }
      }
    }
    if (!index) {
      index = {body, pos: logEnd(), text: toLower(textContentOf(body) || ""), dirty: new Set_(), dirtyChars: 0, links: [],
               linksText: "", labels: [], labelsText: "", made: 0};
      const links = [], labels = [];
      for (const el of docQueryAll(doc, LINK_SELECTOR)) push(links, linkEntry(index, el));
      for (const el of docQueryAll(doc, LABEL_SELECTOR)) push(labels, labelEntry(index, el));
      index.linksText = joinList(links, "\u0000");
      index.labelsText = joinList(labels, "\u0000");
      index.made = index.links.length + index.labels.length;
    }
    if (observing) pageIndex = index;
    return index;
  }
  function textHas(index, lower) {
    // Whether the page's text may hold `lower` (the text indexed, or a node changed since).
    if (indexOf(index.text, lower) >= 0) return true;
    for (const node of index.dirty) {
      const text = nodeTypeOf(node) === 1 ? textContentOf(node) : nodeValueOf(node);
      if (text && indexOf(toLower(text), lower) >= 0) return true;
    }
    return false;
  }

  function sources(needle, opts) {
    opts = opts || {};
    if (!needle || needle.length < 6) return [];
    observeChanges();
    const key = needle + "\u0000" + (opts.path || "") + "\u0000" + joinList(opts.ugc || [], ",");
    const hit = observing ? sourceCache.get(key) : null;
    if (hit && hit.version === domVersion) return hit.out;
    const out = searchSources(needle, opts);
    if (observing) {
      if (sourceCache.size > 32) sourceCache.clear();
      sourceCache.set(key, {version: domVersion, out});
    }
    return out;
  }

  function searchSources(needle, opts) {
    // Where `needle` (a typed value, or a URL as host+path) occurs in the page: text (hidden
    // included), link targets and aria/title attributes, each with its surroundings. Native
    // searches first, so a page without the needle costs one textContent scan and two queries.
    opts = opts || {};
    const out = [];
    if (!needle || needle.length < 6) return out;
    const lower = toLower(needle);
    const blockSelector = joinList(BLOCK_SELECTORS, ", ") + ", " + DIALOG_SELECTOR + ", p, li, div";
    const doc = document;
    const body = bodyOf(doc);
    if (!body) return out;
    const add = (node, snippet, kind) => {
      const el = isElement(node) ? node : parentElementOf(node);
      if (!el) return;
      push(out, {
        snippet: clip(snippet, 600),
        in_ugc: !!ugcRegion(el, opts.ugc),
        hidden: hiddenReason(el) !== null,
        in_dialog: !!closestAcross(el, DIALOG_SELECTOR),
        kind,
      });
    };
    const page = indexOfPage(doc, body);
    if (textHas(page, lower)) {
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
    const linkBlock = joinList(BLOCK_SELECTORS, ", ") + ", " + DIALOG_SELECTOR + ", p, li";
    const hrefNeedle = opts.path && opts.path.length >= 2 ? opts.path : needle;
    const hrefLower = toLower(hrefNeedle);
    // (no entry carries it when the joined text does not; an element indexed as carrying it is
    // read again: it may have changed or gone since)
    const seen = new Set_();
    const live = (a) => !seen.has(a) && isConnectedOf(a) && ownerDocumentOf(a) === doc && !!seen.add(a);
    for (const [a, hrefAttr, actionAttr] of indexOf(page.linksText, hrefLower) >= 0 ? page.links : []) {
      if (out.length >= 6) break;
      if (indexOf(hrefAttr, hrefLower) < 0 && indexOf(actionAttr, hrefLower) < 0) continue;
      const hrefNow = getAttr(a, "href"), actionNow = getAttr(a, "action");
      if (indexOf(toLower(hrefNow || ""), hrefLower) < 0 && indexOf(toLower(actionNow || ""), hrefLower) < 0) continue;
      if (!live(a)) continue;
      const raw = hrefNow || actionNow || "";
      const href = raw ? resolve(raw, a) : "";
      if (href && indexOf(toLower(href), lower) >= 0) {
        add(a, textOf(closestAcross(a, linkBlock) || a, 900) + " " + href, "href");
      }
    }
    seen.clear();
    for (const [a, lowered] of indexOf(page.labelsText, lower) >= 0 ? page.labels : []) {
      if (out.length >= 6) break;
      if (indexOf(lowered, lower) < 0) continue;
      const shown = [];
      let now = "";
      for (const name of LABEL_ATTRS) { const v = getAttr(a, name); if (v) { push(shown, v); now += toLower(v) + "\u0000"; } }
      if (indexOf(now, lower) < 0 || !live(a)) continue;
      add(a, joinList(shown, " "), "attribute");
    }
    return out;
  }

  function activated(el, opts) {
    // The activation of the action in `opts.activate` on the pointed element `el` (null: none).
    const a = opts.activate;
    if (!a || !el) return null;
    const act = a.key ? keyActivation(el, opts) : clickActivation(el, opts);
    if (act && !act.delegated) act.pointed = el;
    return act;
  }

  function described(el, opts, act) {
    // Facts of what the action acts on: the activated element when there is one.
    if (act && act.delegated) return act.delegated.facts;
    return facts(act ? act.el : el, opts, act);
  }

  function result(el, opts) {
    const act = el ? activated(el, opts) : null;
    const f = el ? described(el, opts, act) : null;
    if (opts.pin && f && !(act && act.delegated)) pin(act ? act.el : el, f, opts.pin, opts.lib, opts.hosts);
    return {count: el ? 1 : 0, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
  }

  function atPoint(opts) {
    if (opts.pointer && lastPointer) opts = {...opts, x: lastPointer.x, y: lastPointer.y};
    const el = hitAt(document, opts.x, opts.y);
    if (el && isFrameEl(el)) {
      const inner = intoFrame(el, opts.x, opts.y, opts);
      if (inner.delegated) return inner.delegated;
      if (inner.hit) {
        const act = opts.activate && !opts.activate.key ? resolveActivation(inner.hit, "the point is over a frame") : null;
        const f = facts(act ? act.el : inner.hit, opts, act);
        // no reader in the frame yet: this document's pin still covers `top.location = …` from it
        if (opts.pin && f) pin(act ? act.el : inner.hit, f, opts.pin, opts.lib, opts.hosts);
        return {count: 1, facts: f, sources: []};
      }
      const act = {el, link: null, submitter: null, via: "the point is over a frame", frame: inner, pointed: null};
      const f = facts(el, opts, act);
      if (opts.pin) pin(el, f, opts.pin, opts.lib, opts.hosts);
      return {count: 1, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
    }
    if (el && opts.activate && !opts.activate.key) {
      const act = resolveActivation(el, "");
      if (!act.link && !act.submitter) act.probe = closedShadowAt(el, document, opts.x, opts.y);
      const f = facts(act.el, opts, act);
      if (opts.pin) pin(act.el, f, opts.pin, opts.lib, opts.hosts);
      return {count: 1, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
    }
    return result(el, opts);
  }

  function focused(opts) {
    let el = activeOf(document);
    while (el && shadowRootOf(el) && shadowActiveOf(shadowRootOf(el))) el = shadowActiveOf(shadowRootOf(el));
    if (el && isFrameEl(el)) {
      // Focus inside a frame: its own reader answers (same origin), else its origin's content.
      let win = null, doc = null;
      [win, doc] = frameParts(el);
      if (doc && win && opts.lib) {
        let lib = null;
        try { lib = win[opts.lib]; } catch (e) { lib = null; }
        if (lib && lib.focused) return lib.focused(opts);
      }
      if (!doc) {
        const src = resolve(frameSrc(el), el);
        const act = {el, link: null, submitter: null, via: "focus is inside a cross-origin frame",
                     frame: {frame: src}, pointed: null};
        return {count: 1, facts: facts(el, opts, act), sources: opts.needle ? sources(opts.needle, opts) : []};
      }
      if (doc) { const inner = activeOf(doc); if (inner) el = inner; }
    }
    if (el === bodyOf(document) || el === docElementOf(document)) el = null;
    return result(el, opts);
  }

  // -- accessible names, fields and overlays ----------------------------------------------
  // Names as the accessibility tree gives them (aria-labelledby, then aria-label, then <label>),
  // so the guard and Playwright's get_by_label / get_by_role agree on which field is which.
  function accessibleName(el) {
    if (!memo) return nameOf(el);
    let name = memo.names.get(el);
    if (name === undefined) { name = nameOf(el); memo.names.set(el, name); }
    return name;
  }
  function nameOf(el) {
    const labelledBy = refsText(el, "aria-labelledby");
    if (labelledBy.length) return clip(joinList(labelledBy, " "), 200);
    const aria = getAttr(el, "aria-label");
    if (aria && trimText(aria)) return clip(aria, 200);
    const parts = [];
    const labels = instanceGet(labelsGetters, el, null);  // null: not a labelable element
    if (labels) for (const label of labelsOf(el, labels)) push(parts, innerTextOf(label) || textOf(label, 200));
    return clip(joinList(parts, " "), 200);
  }

  // The <label>s of a field, in tree order, as its `labels` list gives them, without that list's
  // walk over the whole document for each new field: the labels with a `for` attribute are indexed
  // by it once per version of the element tree and of `for` attributes; the labels around the
  // field are found by walking up. Each is checked to label the field (`control`, the browser's
  // own answer). A field in a shadow tree or another document reads its own `labels` list.
  let labelIndex = null;
  function indexLabel(index, label) {
    // (an SVG <label> has no control; a label whose `for` changed stays under its old one too:
    // each is checked against the field it names, `control`)
    const target = getAttr(label, "for");
    if (target === null || !isHTML(label)) return;
    addTo(index.byFor, target, label);
    index.count++;
  }
  const comparePosition = uncurry(NP.compareDocumentPosition);
  function labelsOf(el, labels) {
    const doc = ownerDocumentOf(el);
    if (doc !== document || rootOf(el) !== doc) return labels;
    observeChanges();
    if (!observing) return labels;
    if (labelIndex) {
      // labels added or given a `for` since: indexed under the `for` they have now
      const fresh = catchUp(labelIndex.pos, ([kind, node, name]) => {
        if (kind === "add") eachIn(node, "label[for]", (label) => indexLabel(labelIndex, label));
        else if (kind === "attr" && name === "for" && isElement(node)) indexLabel(labelIndex, node);
      });
      if (!fresh || labelIndex.count > 2 * labelIndex.made + 4096) labelIndex = null;
      else labelIndex.pos = logEnd();
    }
    if (!labelIndex) {
      labelIndex = {pos: logEnd(), byFor: new Map(), count: 0, made: 0};
      for (const label of labelsByTag(doc, "label")) indexLabel(labelIndex, label);
      labelIndex.made = labelIndex.count;
    }
    const around = [];
    for (let node = parentElementOf(el); node; node = parentElementOf(node)) {
      if (isTag(node, "label") && controlOf(node) === el) push(around, node);
    }
    const out = [];
    for (let i = around.length - 1; i >= 0; i--) push(out, around[i]);  // outermost first
    const id = getAttr(el, "id");
    const named = id ? labelIndex.byFor.get(id) : null;
    if (!named) return out;
    for (const label of named) {
      if (controlOf(label) !== el) continue;
      // in tree order among those found so far (a label around the field, another naming it by id)
      let at = out.length, seen = false;
      for (let i = 0; i < out.length; i++) {
        if (out[i] === label) { seen = true; break; }
        if (at === out.length && comparePosition(label, out[i]) & 4) at = i;  // `label` comes first
      }
      if (seen) continue;
      for (let i = out.length; i > at; i--) out[i] = out[i - 1];
      out[at] = label;
    }
    return out;
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
  // The origin of a URL string (the last few asked are remembered: a read asks for the page's own
  // several times).
  const origins = new Map();
  const originOfURL = (url) => {
    const key = String(url);
    let origin = origins.get(key);
    if (origin !== undefined) return origin;
    try { origin = new URL_(key).origin; } catch (e) { origin = "null"; }
    if (origins.size >= 16) origins.clear();
    origins.set(key, origin);
    return origin;
  };
  const Set_ = W.Set;
  // The names a mirror search compares, per document: elements by their exact aria-label /
  // placeholder (gathered again when the element tree or those attributes changed), and the text
  // of the first 150 labels (again after any text change: bounded).
  const fieldNames = new WeakMap();
  const labelsByTag = uncurry(Document.prototype.getElementsByTagName);
  const NAME_ATTRS = ["aria-label", "placeholder"];
  const NAME_SELECTOR = "[aria-label], [placeholder]";
  function nameEntries(names, el) {
    for (const a of NAME_ATTRS) {
      const v = getAttr(el, a);
      if (v !== null) { addTo(names.byAttr, v, el); names.count++; }
    }
  }
  function namesOfFields(doc) {
    observeChanges();
    const cacheable = observing && doc === document;  // the observer watches this document only
    const old = cacheable ? fieldNames.get(doc) : null;
    const names = {byAttr: null, pos: logEnd(), count: 0, made: 0, textVersion: "t" + treeVersion + "," + textVersion,
                   labels: null};
    if (old) {
      // elements added or given an aria-label / placeholder since: indexed under what they have now
      // (each candidate's name is read again when it is compared)
      const fresh = catchUp(old.pos, ([kind, node, name]) => {
        if (kind === "add") eachIn(node, NAME_SELECTOR, (el) => nameEntries(old, el));
        else if (kind === "attr" && (name === "aria-label" || name === "placeholder") && isElement(node)) nameEntries(old, node);
      });
      if (fresh && old.count <= 2 * old.made + 4096) { names.byAttr = old.byAttr; names.count = old.count; names.made = old.made; }
    }
    if (!names.byAttr) {
      names.byAttr = new Map();
      for (const other of docQueryAll(doc, NAME_SELECTOR)) nameEntries(names, other);
      names.made = names.count;
    }
    if (old && old.textVersion === names.textVersion) names.labels = old.labels;
    else {
      // label text as compared (white space collapsed, lower case) -> the labels carrying it
      names.labels = new Map();
      let n = 0;
      for (const label of labelsByTag(doc, "label")) {
        if (!isHTML(label)) continue;  // another namespace's <label> (SVG) has no control
        if (n++ >= 150) break;
        const text = toLower(trimText(replaceText(textContentOf(label) || "", /\s+/g, " ")));
        const list = names.labels.get(text);
        if (list) push(list, label); else names.labels.set(text, [label]);
      }
    }
    if (cacheable) fieldNames.set(doc, names);
    return names;
  }

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
      const named = namesOfFields(doc);
      const candidates = [];
      for (const other of named.byAttr.get(shown) || []) push(candidates, other);
      for (const label of named.labels.get(name) || []) {
        const control = controlOf(label);
        if (control) push(candidates, control);
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
    const note = (event) => { if (isTrusted(event)) { push(inputTimes, Date.now()); if (inputTimes.length > 20) inputTimes.shift(); } };
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

  const OVERLAY_CONTROLS = "a[href], button, input, select, textarea, [role=button], [role=link]";
  function overlayFacts(el) {
    const [box, kind] = overlayBox(el);
    if (!box) return null;
    const r = rectOf(box);
    const origin = (() => { try { return new URL_(docURLOf(ownerDocumentOf(el))).origin; } catch (e) { return ""; } })();
    let links = 0, sameOrigin = 0, controls = 0;
    scanRegion(box, (node) => {
      if (!matchesSel(node, OVERLAY_CONTROLS)) return true;
      if (++controls > 60) return false;
      if (tag(node) !== "a") return true;
      links++;
      const href = resolve(getAttr(node, "href") || "", node);
      try { if (new URL_(href).origin === origin) sameOrigin++; } catch (e) { /* not a URL */ }
      return true;
    });
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
      field: opts.field && (isTag(el, "input", "textarea", "select") || contentEditableOf(el)) ? fieldFacts(el) : null,
    };
  }

  // -- destination pinning ------------------------------------------------------------------
  // A page can show one destination and swap it when the click comes: an href changed on
  // mousedown or in the link's own click handler, an href given to a placeholder <a>, a form
  // action rewritten by a late submit listener, a button replaced by a link on pointerover.
  // When the guard has judged an activation, the origins it judged (the page's own, the link's,
  // the form's) are pinned here; until the action has run, a link or form navigation to any other
  // origin is stopped: at the click (capture and bubble), at the submit (capture and bubble),
  // and last at the Navigation API's `navigate` event, which every link and form navigation
  // passes after all page handlers ran. Within the pin's window this also stops navigations the
  // page's script starts (`location = …`, `form.submit()`) to an origin the guard did not judge;
  // a navigation a page script starts by itself later is left to the network layer.
  const originOf = (url) => originOfURL(url);
  const urlHostOf = (url) => { try { return new URL_(url).hostname; } catch (e) { return ""; } };
  const endsWith = uncurry(String.prototype.endsWith);
  let pinned = null;
  // The hosts the policies allow (`opts.hosts`, sent by the guard with each pinned read):
  // {allow: [[pattern, …] per domain_allow rule], site: the page's registrable domain when there
  // is no allow-list}. A navigation to such a host is not stopped for its origin (a judged link or
  // form still must reach what was judged): it goes where a judged goto could go, and the guard's
  // navigation gate judges every top-level navigation against the full policies anyway.
  function hostMatches(host, p) {
    if (p === "*") return true;
    if (p[0] === "*" && p[1] === ".") return endsWith(host, sliceText(p, 1));
    if (p[0] === ".") return host === sliceText(p, 1) || endsWith(host, p);
    return host === p;
  }
  function policyAllows(url, policy) {
    if (!policy) return false;
    const host = toLower(urlHostOf(url));
    if (!host) return false;
    const rules = policy.allow || [];
    if (rules.length) {
      for (const rule of rules) {
        let ok = false;
        for (const p of rule) if (hostMatches(host, p)) { ok = true; break; }
        if (!ok) return false;
      }
      return true;
    }
    const site = policy.site;
    return !!site && (host === site || endsWith(host, "." + site));
  }
  const allowedDest = (now) => pinned.allowed.has(originOf(now)) || policyAllows(now, pinned.policy);
  let lastPointer = null;
  // Event primitives captured now: a page that patches Event.prototype later cannot disarm pinning.
  const preventDefault = uncurry(Event.prototype.preventDefault);
  const composedPath = uncurry(Event.prototype.composedPath);
  const isTrusted = (event) => event.isTrusted === true;  // unforgeable: an own, non-configurable property
  const eventTarget = getter(Event.prototype, "target");
  const cancelableOf = getter(Event.prototype, "cancelable");
  const submitterOf = getter(SubmitEvent.prototype, "submitter");
  const clientXOf = getter(MouseEvent.prototype, "clientX");
  const clientYOf = getter(MouseEvent.prototype, "clientY");
  const NavigateEvent_ = W.NavigateEvent;
  const navDestinationOf = NavigateEvent_ ? getter(NavigateEvent_.prototype, "destination") : null;
  const navUserInitiatedOf = NavigateEvent_ ? getter(NavigateEvent_.prototype, "userInitiated") : null;
  const navTypeOf = NavigateEvent_ ? getter(NavigateEvent_.prototype, "navigationType") : null;
  const destinationURLOf = W.NavigationDestination ? getter(NavigationDestination.prototype, "url") : null;
  const stopped = [];
  const defaultViewOf = getter(Document.prototype, "defaultView");
  function docOrigin(doc) {
    // about:srcdoc and about:blank documents carry their creator's origin: the parent's.
    const o = originOf(docURLOf(doc));
    if (o !== "null") return o;
    try {
      const owner = defaultViewOf(doc).frameElement;
      if (owner) return docOrigin(ownerDocumentOf(owner));
    } catch (e) { /* a cross-origin parent */ }
    return o;
  }
  let pinnedLib = null;  // the reader's name in each window (`opts.lib`): a frame's stops go to the top's
  function pin(el, f, mode, lib, policy) {
    if (lib) pinnedLib = lib;
    // mode "page": the action activates nothing (hover, focus, typing, a change): only the page's
    // own origin was judged, so a navigation its handlers start elsewhere is stopped. "links":
    // link and form activations only (a network layer judges what scripts start).
    const allowed = new Set_([docOrigin(document), docOrigin(ownerDocumentOf(el))]);
    if (mode !== "page") {
      if (f && f.href) allowed.add(originOf(f.href));
      if (f && f.form && f.is_submit) allowed.add(originOf(f.form.action));
      if (f && f.frame_content) allowed.add(originOf(f.frame_content));
    }
    const expected = (f && (f.href || (f.is_submit && f.form && f.form.action))) || docURLOf(ownerDocumentOf(el));
    // What the judged activation reaches, beyond its origin: a click that reaches another link,
    // or a submission to another address, is not the one judged (an element swapped under the
    // click, a same-site href or form action rewritten on mousedown / submit).
    const target = mode === "page" || !f ? null
      : {link: f.href || null, form: f.is_submit && f.form ? f.form.action : null};
    pinAs(allowed, expected, mode !== "links", target, policy, mode === "page" ? null : el);
    // A script of this frame can navigate the frames above it (`top.location = …`): their
    // readers pin the same origins (same-origin ancestors; Chromium stops a cross-origin
    // frame from navigating the top without the user's click anyway).
    let w = W;
    for (let i = 0; lib && i < 6; i++) {
      let up = null, theirs = null;
      try { up = w.parent; } catch (e) { up = null; }
      if (!up || up === w) break;
      try { theirs = up[lib]; } catch (e) { theirs = null; }
      if (theirs && theirs.pinAs) { try { theirs.pinAs(new Set_(allowed), expected, mode !== "links", null, policy); } catch (e) { /* */ } }
      w = up;
    }
  }
  function pinAs(allowed, expected, scripts, target, policy, el) {
    relisten();
    allowed.add(docOrigin(document));
    pinned = {allowed, scripts, expected, target: target || null, policy: policy || null, el: el || null,
      until: Date.now() + 10000};
  }
  const decode = W.decodeURIComponent;
  function sameTarget(now, judged) {
    // The same destination up to its query and fragment (tracking parameters added on click),
    // or a redirect wrapper of the page's own site that carries the judged URL (…/url?q=<it>).
    if (!judged || testRe(/^javascript:/i, judged)) return true;
    if (now === judged) return true;
    let a = null, b = null;
    try { a = new URL_(now); b = new URL_(judged); } catch (e) { return false; }
    if (a.origin === b.origin && a.pathname === b.pathname) return true;
    let search = a.search;
    try { search = decode(search); } catch (e) { /* malformed escapes: compare as written */ }
    return indexOf(search, b.origin + b.pathname) >= 0;
  }
  function active() {
    return pinned && Date.now() <= pinned.until;
  }
  function stop(event, actual, how) {
    if (cancelableOf(event)) preventDefault(event);
    const item = {expected: pinned.expected, actual, how};
    noteStop(item);
    if (W.top !== W) forwardStop(item);
  }
  function noteStop(item) {
    push(stopped, item);
    if (stopped.length > 8) stopped.shift();
  }
  // A frame's stop is told to the top document's reader, which the guard reads with the action's
  // check and with the next action (no extra round trip): a same-origin top's reader takes it
  // straight into its list; across origins a message carries the how and the origin stopped (not
  // the URL: the top page sees the message, and the URL may hold what the frame tried to send).
  const STOP_KEY = "__pagewardenFrameStop";
  function forwardStop(item) {
    let theirs = null;
    try { theirs = pinnedLib ? W.top[pinnedLib] : null; } catch (e) { theirs = null; }
    if (theirs && theirs.noteStop) { try { theirs.noteStop(item); return; } catch (e) { /* */ } }
    try { W.top.postMessage({[STOP_KEY]: {how: String(item.how), actual: originOf(item.actual)}}, "*"); } catch (e) { /* */ }
  }
  function onStopMessage(event) {
    let data = null;
    try { data = event.data; } catch (e) { return; }
    if (!data || typeof data !== "object" || !data[STOP_KEY] || event.source === W) return;
    // Any page can post this message: only an origin and a known kind of stop are taken from
    // it (no free text reaches the agent's guidance), and a flood is capped by `stopped` (8).
    const note = data[STOP_KEY];
    let actual = "a frame's destination", how = "navigation";
    try {
      const origin = originOf(String(note.actual).slice(0, 2048));
      if (origin !== "null" && testRe(/^https?:\/\/[^\s/]+$/i, origin)) actual = origin;
      const kind = String(note.how);
      if (kind === "link" || kind === "form" || kind === "script navigation") how = kind;
    } catch (e) { /* a hostile object (getters, toString): the defaults */ }
    noteStop({expected: null, actual, how: "frame " + how});
  }
  // The judged activation was neither a link nor a submit button, yet the click reaches one that
  // is not the judged element: the page put it there after the guard's read (an element
  // swapped in on pointerdown / mousedown, under the click point Playwright had checked).
  const swappedIn = (node) => !!(pinned.el && pinned.target && node !== pinned.el);
  function onClick(event) {
    if (!active() || !isTrusted(event)) return;
    for (const node of composedPath(event)) {
      if (!isElement(node)) continue;
      const raw = linkHref(node);
      if (raw === null) {
        if (isSubmitter(node) && submitterOk(node) && !pinned.target?.form && swappedIn(node)) {
          const action = getAttr(node, "formaction") || getAttr(formOf(node), "action");
          stop(event, action && trimText(action) ? resolve(action, node) : docURLOf(ownerDocumentOf(node)), "form");
          return;
        }
        continue;
      }
      const now = resolve(trimText(raw), node);
      if (!allowedDest(now) && !testRe(/^javascript:/i, now)) stop(event, now, "link");
      else if (pinned.target && pinned.target.link && !sameTarget(now, pinned.target.link)) stop(event, now, "link");
      else if (pinned.target && !pinned.target.link && swappedIn(node)) stop(event, now, "link");
      return;
    }
  }
  function onSubmit(event) {
    if (!active()) return;
    const form = eventTarget(event);
    if (!isElement(form)) return;
    const submitter = submitterOf(event);
    const attr = (submitter && getAttr(submitter, "formaction")) || getAttr(form, "action");
    const now = attr && trimText(attr) ? resolve(attr, form) : docURLOf(ownerDocumentOf(form));
    if (!allowedDest(now)) stop(event, now, "form");
    else if (pinned.target && pinned.target.form && !sameTarget(now, pinned.target.form)) stop(event, now, "form");
  }
  const replaceState = uncurry(History.prototype.replaceState);
  const historyState = getter(History.prototype, "state");
  function onNavigate(event) {
    if (!active() || !navDestinationOf || !destinationURLOf) return;
    if (navTypeOf(event) === "traverse") return;
    if (!pinned.scripts && !navUserInitiatedOf(event)) return;
    const now = destinationURLOf(navDestinationOf(event));
    if (allowedDest(now)) return;
    // Not only link and form activations: a navigation the page's own script starts while the
    // agent's action runs (a click / change / key handler setting `location`, `form.submit()`,
    // a synthetic `a.click()`, a meta refresh inserted on click, a popup moving its opener) goes
    // where nobody judged.
    stop(event, now, navUserInitiatedOf(event) ? "navigation" : "script navigation");
    // Playwright waits for the navigation the click requested; a same-document commit to the
    // current URL ends that wait (a cancelled navigation otherwise holds it until its timeout).
    try { replaceState(W.history, historyState(W.history), "", docURLOf(document)); } catch (e) { /* */ }
  }
  const addListener = uncurry(EventTarget.prototype.addEventListener);
  const removeListener = uncurry(EventTarget.prototype.removeEventListener);
  function relisten() {
    // Bubble listeners moved to the end of the window's list when an action is pinned: they
    // run after every page listener registered before the action.
    for (const [type, fn] of [["click", onClick], ["auxclick", onClick], ["submit", onSubmit]]) {
      removeListener(W, type, fn, false);
      addListener(W, type, fn, false);
    }
  }
  function listen() {
    // Capture listeners on the window, a bubble listener after the page's own handlers, and
    // the Navigation API's `navigate` event as the last word.
    const add = addListener;
    add(W, "click", onClick, true);
    add(W, "click", onClick, false);
    add(W, "auxclick", onClick, true);  // a middle click opens the link in a new tab
    add(W, "auxclick", onClick, false);
    // Where the mouse is (Playwright's hover leaves it there): mouse.down() acts at this point.
    add(W, "mousemove", (event) => { if (isTrusted(event)) lastPointer = {x: clientXOf(event), y: clientYOf(event)}; }, true);
    add(W, "submit", onSubmit, true);
    add(W, "submit", onSubmit, false);
    if (W.navigation && NavigateEvent_) add(W.navigation, "navigate", onNavigate, false);
    if (W.top === W) add(W, "message", onStopMessage, true);
    watchOverlays(add);
  }
  function report() {
    // What was stopped so far. The pin stays for its window: a script the action set off may
    // still try to leave (a timer, a popup moving its opener).
    return stopped.splice(0, stopped.length);
  }

  function locator(els, opts) {
    const one = els.length >= 1 && (els.length === 1 || !opts.strict);
    const act = one ? activated(els[0], opts) : null;
    const f = one ? described(els[0], opts, act) : null;
    if (opts.pin && f && !(act && act.delegated)) pin(act ? act.el : els[0], f, opts.pin, opts.lib, opts.hosts);
    return {count: els.length, facts: f, sources: opts.needle ? sources(opts.needle, opts) : []};
  }

  function select(root, opts) {
    // The element a plain CSS locator resolves to, found in the document's light tree with the
    // native query, without the walk over every element Playwright's own CSS engine makes to
    // pierce shadow roots. Playwright lists light-tree matches first and raises on several
    // matches of a strict locator, so a single light match (or the first, not strict) is the
    // element the action acts on; anything else (no match, several, a selector the native query
    // refuses) answers `fallback` and the caller resolves the locator the usual way.
    const doc = nodeTypeOf(root) === 9 ? root : ownerDocumentOf(root);
    let els = null;
    try { els = docQueryAll(doc, opts.css); } catch (e) { return {fallback: true}; }
    const n = listLength(els);
    if (!n || (opts.strict && n > 1)) return {fallback: true};
    return locator([listItem(els, 0)], opts);
  }

  // -- masking pictures of the page ----------------------------------------------------------
  // The boxes of the fields a picture of the page must not show: every field that is or ever
  // was a password field in this document as far as any read saw (a mask read, or the facts of
  // an action's target: a page that flips `type` to text to show it is remembered), whose
  // autocomplete, name, id, label or placeholder names a password, PIN or one-time code
  // (evidence that stays when a page flips the type before any read), or that holds a value a
  // password field held (a page that copies the value into another field, or swaps the field
  // for a text twin); and, for the guard to compare with its registered secrets (which never
  // enter the page), each text field's value. The values stay in this world: they are never
  // returned. Boxes are viewport CSS pixels, read with the reader's own primitives; fields in
  // open shadow roots and same-origin frames are included (a frame's boxes offset by the
  // frame's box).
  const everPassword = new W.WeakSet();
  const passwordValues = new Set_();
  const PASSWORD_WORDS = /pass(?:word|wd|code|phrase)|pwd|passwort|mot.de.passe|contrase|(?:^|[^a-z])(?:pin|otp|totp|2fa|mfa)(?:[^a-z]|$)|one.?time.?(?:code|pass)/i;
  function notePassword(el, value) {
    everPassword.add(el);
    if (value && passwordValues.size < 256) passwordValues.add(value);
  }
  function namedPassword(el) {
    // its own attributes and its first <label> (cheap: read for every filled field of every frame)
    for (const attr of ["name", "id", "aria-label", "placeholder", "title"]) {
      const text = getAttr(el, attr);
      if (text && testRe(PASSWORD_WORDS, sliceText(text, 0, 200))) return true;
    }
    const labels = instanceGet(labelsGetters, el, null);
    const first = labels && listLength(labels) ? listItem(labels, 0) : null;
    const text = first ? textContentOf(first) : "";
    return !!text && testRe(PASSWORD_WORDS, sliceText(text, 0, 200));
  }
  const shadowQueryAll = uncurry(DocumentFragment.prototype.querySelectorAll);
  const CREDENTIAL_AUTOCOMPLETE = /(?:^|\s)(?:current-password|new-password|one-time-code|cc-csc)(?:\s|$)/i;
  function maskFields(opts) {
    const out = [];
    const limit = Math.min(Number(opts.limit) || 400, 2000);
    const visit = (doc, dx, dy, depth) => {
      const roots = [doc];
      for (let r = 0; r < roots.length && out.length < limit; r++) {
        const root = roots[r];
        const all = nodeTypeOf(root) === 9 ? docQueryAll(root, "*") : shadowQueryAll(root, "*");
        for (const el of all) {
          if (out.length >= limit) break;
          const shadow = shadowRootOf(el);
          if (shadow && roots.length < 200) push(roots, shadow);
          const t = tag(el);
          if (depth < 3 && (t === "iframe" || t === "frame")) {
            const [, inner] = frameParts(el);
            if (inner) { const fr = rectOf(el); visit(inner, dx + fr.left + clientLeftOf(el), dy + fr.top + clientTopOf(el), depth + 1); }
            continue;
          }
          const field = t === "input" || t === "textarea";
          if (!field && !contentEditableOf(el)) continue;
          const type = t === "input" ? toLower(getAttr(el, "type") || "text") : t;
          const value = field ? String(instanceGet(valueGetters, el, "") || "") : (textContentOf(el) || "");
          if (t === "input" && ["hidden", "checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color"].includes(type)) {
            // not a text field, unless it shows what a password field held (a button's label is its value)
            if (!(["submit", "button", "reset"].includes(type) && (everPassword.has(el) || passwordValues.has(value)))) continue;
          }
          if (type === "password") notePassword(el, value);
          else if (value && everPassword.has(el) && passwordValues.size < 256) passwordValues.add(value);
          const password = everPassword.has(el) || testRe(CREDENTIAL_AUTOCOMPLETE, getAttr(el, "autocomplete") || "") ||
            (!!value && (passwordValues.has(value) || namedPassword(el)));
          if (!password && !value) continue;
          const r = rectOf(el);
          if (r.width <= 0 || r.height <= 0) continue;
          push(out, {box: [r.left + dx, r.top + dy, r.width, r.height], password,
            value: password ? "" : sliceText(value, 0, 2000)});
        }
      }
    };
    visit(document, 0, 0, 0);
    return {fields: out, viewport: [innerW(), innerH()]};
  }

  // -- the selector engine ------------------------------------------------------------------
  // Registered with Playwright as a content-script selector engine, the reader runs in
  // Playwright's utility world: an isolated world the page's scripts cannot reach, present in
  // every frame, including documents loaded before the guard was attached. `locator >> engine=
  // {json}` calls it with the located element (or the document) as root; the answer is one
  // JSON string in an attribute of a detached element, read back with `get_attribute`: one round
  // trip, one compact serialisation.
  const parseJSON = JSON.parse, toJSON = JSON.stringify;
  const createEl = uncurry(Document.prototype.createElement);
  const setAttr = uncurry(EP.setAttribute);
  function entry(root, opts) {
    // Navigations stopped since the last read (after an action whose result was not checked)
    // ride along with the next read: reported at no extra round trip.
    const earlier = opts.entry !== "report" && stopped.length ? report() : null;
    let out;
    switch (opts.entry) {
      case "locator": out = locator([root], opts); break;
      case "select": out = select(root, opts); break;
      case "point": out = atPoint(opts); break;
      case "focused": out = focused(opts); break;
      case "sources": out = sources(opts.needle, opts); break;
      case "report": return report();
      case "mask": return maskFields(opts);
      default: return {__error: "unknown entry " + String(opts.entry)};
    }
    if (earlier && out && typeof out === "object" && !Array.isArray(out)) out.earlier_stops = earlier;
    return out;
  }
  function engine() {
    const run = reading((root, body) => {
      let out;
      try { out = entry(root, parseJSON(body)); } catch (e) { out = {__error: String(e)}; }
      const doc = nodeTypeOf(root) === 9 ? root : ownerDocumentOf(root);
      const holder = createEl(doc, "pw-facts");
      setAttr(holder, "d", toJSON(out === undefined ? null : out));
      return holder;
    });
    return {query: run, queryAll: (root, body) => [run(root, body)]};
  }
  function direct(body) {
    // The same read rooted at the document, called over CDP in the world the engine runs in
    // (see observe/_direct.py): the answer is the JSON string itself.
    let out;
    try { out = entry(document, parseJSON(body)); } catch (e) { out = {__error: String(e)}; }
    return toJSON(out === undefined ? null : out);
  }

  return Object.freeze({facts: reading(facts), sources: reading(sources), result: reading(result),
    atPoint: reading(atPoint), focused: reading(focused), locator: reading(locator), listen, report,
    engine, pinAs, direct: reading(direct), noteStop, maskFields: reading(maskFields)});
}
