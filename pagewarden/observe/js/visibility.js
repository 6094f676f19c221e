// Visibility: why an element would not be seen (display, visibility, opacity, clipping, size,
// position, tiny or background-coloured text), and its effective opacity.

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

function effectiveOpacity(el) {
  let opacity = 1;
  for (let node = el; node; node = parentOf(node)) {
    if (!isElement(node)) continue;
    const v = parseFloat(style(node, "opacity"));
    if (!isNaN(v)) opacity *= v;
  }
  return Math.round(opacity * 1000) / 1000;
}
