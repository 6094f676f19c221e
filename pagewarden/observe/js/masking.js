// Masking: the boxes (and values) of the fields a picture of the page must not show.

// -- masking pictures of the page ----------------------------------------------------------
// The boxes of the fields a picture of the page must not show: every field that is or ever
// was a password field in this document (a page that flips `type` to text to show it is
// remembered), or whose autocomplete names a password or one-time code; and, for the guard to
// compare with its registered secrets (which never enter the page), each text field's value.
// Boxes are viewport CSS pixels, read with the reader's own primitives; fields in open shadow
// roots and same-origin frames are included (a frame's boxes offset by the frame's box).
const everPassword = new W.WeakSet();
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
        if (t === "input" && ["hidden", "checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color"].includes(type)) continue;
        if (type === "password") everPassword.add(el);
        const password = everPassword.has(el) || testRe(CREDENTIAL_AUTOCOMPLETE, getAttr(el, "autocomplete") || "");
        const value = field ? String(instanceGet(valueGetters, el, "") || "") : (textContentOf(el) || "");
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
