// Shared reading helpers: the per-read memo of computed styles and names (`reading`), text of
// a subtree, walking up across shadow roots and the flat tree, bounded region scans, URL
// resolution and origins, and the constants several modules share.

const DIALOG_SELECTOR = "dialog, [role=dialog], [role=alertdialog], [aria-modal=true]";
const MAX_CONTEXT = 1200;
const MAX_TEXT = 400;

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

function resolve(url, el) {
  try { return new URL_(url, baseURIOf(el)).href; } catch (e) { return url; }
}

// How far a scan of a region (a user-content block, a dialog, an overlay, a container) looks:
// its first REGION_SCAN elements in tree order. A region as large as the page (an <article> or
// a fixed shell around everything, a list of 10,000 rows) then costs what a small one does;
// its text is capped the same way (the first characters from its start).
const REGION_SCAN = 600;
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

function addTo(map, key, el) {
  // `el` into the list of `key` (once).
  const list = map.get(key);
  if (!list) { map.set(key, [el]); return; }
  for (let i = 0; i < list.length; i++) if (list[i] === el) return;
  push(list, el);
}
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
