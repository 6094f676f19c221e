// Names and roles: the implicit ARIA role, the aria/title/alt text, and the accessible name
// (aria-labelledby, aria-label, <label>s) with the index of labels by `for`.

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

// -- accessible names --------------------------------------------------------------------
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
