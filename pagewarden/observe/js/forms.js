// Forms and fields: submit buttons, a control's form and what its submission would post, and a
// field's own facts (visibility, mirrors: another visible field with the same name elsewhere).

function isSubmitter(el) {
  // A <button> whose type is missing or invalid (`type=bogus`) is a submit button.
  const t = tag(el);
  const type = toLower(trimText(getAttr(el, "type") || ""));
  if (t === "button") return type !== "button" && type !== "reset";
  if (t === "input") return type === "submit" || type === "image";
  return false;
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

function disabled(el) {
  return !!instanceGet(disabledGetters, el, false);
}

function submitterOk(el) {
  if (!isSubmitter(el) || disabled(el)) return false;
  if (tag(el) === "button") { try { if (buttonTypeOf(el) !== "submit") return false; } catch (e) { /* realm */ } }
  return !!formOf(el);
}

function defaultButton(form) {
  for (const f of formElementsOf(form)) if (isSubmitter(f)) return f;
  return null;
}

const FIELD_SELECTOR = "input:not([type=hidden]):not([type=submit]):not([type=button]):not([type=reset])" +
  ":not([type=image]):not([type=checkbox]):not([type=radio]), textarea, select, [contenteditable=true]";

// The names a mirror search compares, per document: elements by their exact aria-label /
// placeholder (gathered again when the element tree or those attributes changed), and the text
// of the first 150 labels (again after any text change: bounded).
const fieldNames = new WeakMap();
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
