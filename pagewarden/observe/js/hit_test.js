// Hit testing: what is at a viewport point (through open shadow roots, slots, image maps and
// frames), where Playwright clicks, closed shadow roots the guard must probe over CDP, and
// elements a click can only land on themselves.

// Every element that holds a nested document: <iframe>, <frame>, <object>, <embed>.
const FRAME_TAGS = ["iframe", "frame", "object", "embed"];
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
const NOT_LEAVES = ["img", "area", "map", "svg", "math"];
function landsOnItself(el) {
  if (!isHTML(el) || firstElementChildOf(el) !== null || shadowRootOf(el)) return false;
  const t = tag(el);
  return SHADOW_HOSTS[t] !== 1 && indexOf(t, "-") < 0 && !isFrameEl(el) && !NOT_LEAVES.includes(t);
}
