// Masking: the boxes (and values) of the fields a picture of the page must not show.

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
  const result = {fields: out, viewport: [innerW(), innerH()]};
  if (opts.texts) result.texts = maskTexts(opts);
  return result;
}

// The text a picture shows, for the guard to look for its secrets in (`opts.texts`: asked only
// when the guard has some): each text node in the viewport, in document order, with its box
// (read with a range, the reader's own primitives), of the top document and of same-origin
// frames; at most 3000 nodes and 200,000 characters.
function maskTexts(opts) {
  const out = [];
  let chars = 0;
  const vw = innerW(), vh = innerH();
  const visit = (doc, dx, dy, depth) => {
    const body = bodyOf(doc);
    if (!body) return;
    const walker = makeWalker(doc, body, SHOW_TEXT);
    const range = newRange(doc);
    for (let node = walkNext(walker); node && out.length < 3000 && chars < 200000; node = walkNext(walker)) {
      const text = nodeValueOf(node) || "";
      if (!testRe(/\S/, text)) continue;
      rangeSelectContents(range, node);
      const r = rangeRectOf(range);
      if (r.width <= 0 || r.height <= 0) continue;
      const x = r.left + dx, y = r.top + dy;
      if (x > vw || y > vh || x + r.width < 0 || y + r.height < 0) continue;
      const piece = sliceText(text, 0, 2000);
      chars += piece.length;
      push(out, {box: [x, y, r.width, r.height], text: piece});
    }
    if (depth >= 3) return;
    for (const el of docQueryAll(doc, "iframe, frame")) {
      const [, inner] = frameParts(el);
      if (inner) { const fr = rectOf(el); visit(inner, dx + fr.left + clientLeftOf(el), dy + fr.top + clientTopOf(el), depth + 1); }
    }
  };
  visit(document, 0, 0, 0);
  return out;
}
