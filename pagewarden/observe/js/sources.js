// Where a value occurs in the page (`sources`): the page-wide index of text, link targets and
// labelling attributes, kept up to date from the mutation log, and the search over it.

const sourceCache = new Map();

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
