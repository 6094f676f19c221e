// The mutation log: DOM versions (any change, text, element tree) and a bounded log of what
// changed, from which the page-wide indexes (labels, link targets, names, text) catch up.

// Page-wide searches are cached until the DOM changes in a way that matters to them. A mutation
// observer sorts the changes (records not yet delivered are taken at each read, so a change
// just before it counts): any change at all (`domVersion`), text (characters, child lists:
// `textVersion`), the element tree (elements added or removed: `treeVersion`), and a log of
// what changed (below) from which the page-wide indexes are brought up to date.
let domVersion = 0, textVersion = 0, treeVersion = 0;
let observing = false;
let changes = null;
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
