// The text around an element for the judge: its container's text (hidden text included), the
// aria text in it, and text a walk of text nodes misses (CSS generated content, open shadow
// roots, same-origin frames).

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
