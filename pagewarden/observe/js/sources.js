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
  const address = opts.address;
  if (!address && (!needle || needle.length < 6)) return [];
  observeChanges();
  const key = (address ? toJSON(address) : needle) + "\u0000" + (opts.path || "") + "\u0000" +
    joinList(opts.ugc || [], ",");
  const hit = observing ? sourceCache.get(key) : null;
  if (hit && hit.version === domVersion) return hit.out;
  const out = address ? addressSources(address, opts) : searchSources(needle, opts);
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

// -- a typed address: where the page gives it, however it is written -------------------------
// `address` (from observe/_gather.py `address_needle`): the host's spellings (`hosts`: punycode
// and Unicode, lower case), its `path` (decoded, lower case; "" for the root: then the host
// alone is enough), and for an IP literal `v4` (the IPv4 address as a number, also for an
// IPv4-mapped IPv6 one) and/or `v6` (the IPv6 literal in brackets, as URLs serialise it).
// The page's text is folded first: compatibility forms (full-width digits and dots), invisible
// characters, entities and percent-escapes, defanged dots (`[.]`, `(dot)`), backslashes, and
// whitespace (removed: an address broken up by markup or spaces reads whole). IP literals are
// read as a browser reads them (decimal, octal, hex, one to four parts; IPv6 by the URL parser).
const ADDR_INVISIBLE = /[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/g;
const ADDR_ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|(period|colon|sol|commat|lsqb|rsqb|amp|bsol|dot));?/g;
const ADDR_NAMED = {period: ".", colon: ":", sol: "/", commat: "@", lsqb: "[", rsqb: "]", amp: "&", bsol: "\\", dot: "."};
const ADDR_PERCENT = /%([0-9a-f]{2})/g;
const ADDR_DEFANG = /\s*[\[\(\{<]\s*(?:\.|dot)\s*[\]\)\}>]\s*|\s+dot\s+/g;
const ADDR_DOTS = /[\u3002\uff61]/g;
const ADDR_SEPARATED = /\s*([.:\/@\[\]])\s*/g;
const ADDR_SPACES = /\s+/g;
const ADDR_IPV4 = /(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}\.?/g;
// (an address of 1.0.0.0 or above written as one number has eight digits at least: shorter
// plain numbers — most of a page's — are not read)
const ADDR_IPV4_LONG = /(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){1,3}\.?|0x[0-9a-f]+|0[0-7]{8,}|[0-9]{8,}/g;
const ADDR_IPV6 = /\[?([0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?:\.[0-9]{1,3}){0,3})\]?/g;
const SKIP_TEXT = /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/;

// (each regex run once on a short text now: V8 runs a regex's first execution in its
// interpreter, which over a large page is two orders of magnitude slower)
for (const re of [ADDR_ENTITY, ADDR_PERCENT, ADDR_DEFANG, ADDR_DOTS, ADDR_SEPARATED, ADDR_SPACES, ADDR_IPV4,
  ADDR_IPV4_LONG, ADDR_IPV6, ADDR_INVISIBLE]) {
  replaceText("0x7f. 1 [.] &#46; %2e :: \u200b", re, "");
  re.lastIndex = 0;
}

function addrFold(text, hard) {
  let t = toLower(normalizeText(String(text || ""), "NFKC"));
  t = replaceText(t, ADDR_ENTITY, (m, dec, hex, name) => {
    if (name) return ADDR_NAMED[name];
    const code = dec ? parseIntText(dec, 10) : parseIntText(hex, 16);
    return code > 0 && code < 0x10000 ? fromCharCode(code) : m;
  });
  t = replaceText(t, ADDR_PERCENT, (m, hex) => {
    const code = parseIntText(hex, 16);
    return code > 0x20 && code < 0x7f ? toLower(fromCharCode(code)) : m;
  });
  t = replaceText(replaceText(t, ADDR_INVISIBLE, ""), ADDR_DOTS, ".");
  t = replaceText(t, ADDR_DEFANG, ".");
  t = replaceText(replaceText(t, /hxxp/g, "http"), /\\/g, "/");
  return hard ? replaceText(t, ADDR_SPACES, "") : replaceText(replaceText(t, ADDR_SEPARATED, "$1"), ADDR_SPACES, " ");
}

function ipv4Part(p) {
  // One part of an IPv4 address as a browser reads it (NaN: not a number).
  if (sliceText(p, 0, 2) === "0x") return p.length === 2 ? 0 : (testRe(/^[0-9a-f]+$/, sliceText(p, 2)) ? parseIntText(sliceText(p, 2), 16) : NaN);
  if (p.length > 1 && p[0] === "0") return testRe(/^[0-7]+$/, p) ? parseIntText(p, 8) : NaN;
  return testRe(/^[0-9]+$/, p) ? parseIntText(p, 10) : NaN;
}

function ipv4Value(token) {
  // A token as a browser's host parser reads an IPv4 address (null: not one).
  if (token.length > 1 && endsWith(token, ".")) token = sliceText(token, 0, -1);
  const parts = splitText(token, ".");
  if (!parts.length || parts.length > 4) return null;
  const nums = [];
  for (const p of parts) {
    if (p === "") return null;
    const n = ipv4Part(p);
    if (!(n >= 0)) return null;
    push(nums, n);
  }
  const last = nums[nums.length - 1];
  for (let i = 0; i < nums.length - 1; i++) if (nums[i] > 255) return null;
  if (last >= 256 ** (5 - nums.length)) return null;
  let value = last;
  for (let i = 0; i < nums.length - 1; i++) value += nums[i] * 256 ** (3 - i);
  return value;
}

function v6Host(token) {
  try { return urlHostname(new URL_("http://[" + token + "]/")); } catch (e) { return null; }
}

function mappedV4(host) {
  // The IPv4 address an IPv4-mapped IPv6 host (`[::ffff:7f00:2]`) reaches, as a number.
  const m = execRe(/^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/, host || "");
  return m ? parseIntText(m[1], 16) * 65536 + parseIntText(m[2], 16) : null;
}

function pathAfter(text, end, path) {
  // Whether `path` follows an address ending at `end` in folded `text` (after a trailing dot and
  // a port); the root path ("") always does.
  if (!path) return true;
  const rest = sliceText(text, end, end + path.length + 16);
  const m = execRe(/^\.?(?::[0-9]{1,5})?/, rest);
  return indexOf(sliceText(rest, m ? m[0].length : 0), path) === 0;
}

function addressEnds(text, address) {
  // Where the address ends in folded `text` (each occurrence followed by its path), for a host
  // name in the hard fold, for an IP literal in the soft fold.
  const ends = [];
  if (address.v4 === undefined && address.v6 === undefined) {
    for (const host of address.hosts) {
      let at = indexOf(text, host);
      while (at >= 0 && ends.length < 8) {
        if (pathAfter(text, at + host.length, address.path)) push(ends, [at, at + host.length]);
        at = indexOf(text, host, at + 1);
      }
    }
    return ends;
  }
  let m;
  if (address.v4 !== undefined && address.v4 !== null) {
    const tokens = address.v4 >= 16777216 ? ADDR_IPV4_LONG : ADDR_IPV4;
    const first = (address.v4 / 16777216) >>> 0;  // the first part of a dotted form
    tokens.lastIndex = 0;
    while ((m = execRe(tokens, text)) && ends.length < 8) {
      const before = m.index ? text[m.index - 1] : "";
      if (before && testRe(/[0-9.]/, before)) continue;
      const token = m[0];
      const dot = indexOf(token, ".");
      if (dot > 0 && dot < token.length - 1 && ipv4Part(sliceText(token, 0, dot)) !== first) continue;  // (most)
      const value = dot < 0 && indexOf(token, "x") < 0 && token[0] !== "0"
        ? parseIntText(token, 10) : ipv4Value(token);  // (a plain number is most tokens)
      if (value === address.v4 && pathAfter(text, m.index + token.length, address.path)) {
        push(ends, [m.index, m.index + m[0].length]);
      }
    }
  }
  ADDR_IPV6.lastIndex = 0;
  while ((m = execRe(ADDR_IPV6, text)) && ends.length < 8) {
    if (m[0].length < 3) { ADDR_IPV6.lastIndex = m.index + 1; continue; }
    const host = v6Host(m[1]);
    if (!host) continue;
    const same = host === address.v6 || (address.v4 !== undefined && address.v4 !== null && mappedV4(host) === address.v4);
    if (same && pathAfter(text, m.index + m[0].length, address.path)) push(ends, [m.index, m.index + m[0].length]);
  }
  return ends;
}

function addressIn(text, address) {
  if (!text) return false;
  const hard = address.v4 === undefined && address.v6 === undefined;
  return addressEnds(addrFold(text, hard), address).length > 0;
}

// Whether the body's text holds the address at all, however written, without building a folded
// copy of a large page: a host name is looked for with a pattern that lets invisible characters
// and whitespace sit between its letters and its dots be defanged (one native search); an IP
// literal in the text with digits joined across whitespace around dots and colons. The text,
// lower-cased and with compatibility forms, percent-escapes and entities undone where it has
// any, is kept while the document does not change.
const ADDR_GAP = "[\\s\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f" +
  "\\u202a-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0]*";
const ADDR_DOT = "(?:\\.|[\\u3002\\uff61]|[\\[\\(\\{<]\\s*(?:\\.|dot)\\s*[\\]\\)\\}>]|\\s+dot\\s+)";
const ADDR_DIGIT_GAPS = /([0-9])\s+(?=[.:])|([.:])\s+(?=[0-9])/g;
const NON_ASCII = /[^\x00-\x7f]/;
replaceText("1 . 2", ADDR_DIGIT_GAPS, "$1$2");  // (warmed up as the ones above)
testRe(NON_ASCII, "a");
const RE_SPECIAL = /[\\^$.*+?()[\]{}|\/-]/g;

function tolerant(text) {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const part = c === "." ? ADDR_DOT : c === "/" ? "[\\/\\\\]" : replaceText(c, RE_SPECIAL, "\\$&");
    out += (out ? ADDR_GAP : "") + part;
  }
  return out;
}

function addressPattern(address) {
  if (!address.pattern) {
    const hosts = [];
    for (const host of address.hosts) push(hosts, tolerant(host));
    let source = "(?:" + joinList(hosts, "|") + ")";
    if (address.path) {
      source += ADDR_GAP + "(?:" + ADDR_DOT + ")?" + ADDR_GAP + "(?::" + ADDR_GAP + "[0-9][0-9\\s]{0,8})?" + ADDR_GAP +
        tolerant(address.path);
    }
    address.pattern = new RegExp(source);
    testRe(address.pattern, "warm up");  // V8 compiles a regex to native code on its second run
  }
  return address.pattern;
}

function prepared(lower) {
  // `lower`: a text in lower case
  let t = lower;
  if (testRe(NON_ASCII, t)) t = replaceText(toLower(normalizeText(t, "NFKC")), ADDR_INVISIBLE, "");
  if (indexOf(t, "%") >= 0) {
    t = replaceText(t, ADDR_PERCENT, (m, hex) => {
      const code = parseIntText(hex, 16);
      return code > 0x20 && code < 0x7f ? toLower(fromCharCode(code)) : m;
    });
  }
  return t;
}

let bodyText = null;
function bodyHas(body, index, address) {
  if (!observing || !bodyText || bodyText.version !== domVersion || bodyText.body !== body) {
    // (the page index's lower-case text when nothing changed since it was read)
    const lower = index.dirty.size ? toLower(textContentOf(body) || "") : index.text;
    bodyText = {version: domVersion, body, text: prepared(lower)};
  }
  const state = bodyText;
  if (!observing) bodyText = null;
  if (address.v4 === undefined && address.v6 === undefined) return testRe(addressPattern(address), state.text);
  if (state.digits === undefined) state.digits = replaceText(state.text, ADDR_DIGIT_GAPS, "$1$2");
  return addressEnds(state.digits, address).length > 0;
}

function hostIs(address, host) {
  // Whether a host as the URL parser serialises it is the address's.
  if (address.v4 === undefined && address.v6 === undefined) return hasHost(address, host);
  return host === address.v6 || (address.v4 !== undefined && address.v4 !== null &&
    (ipv4Value(host) === address.v4 || mappedV4(host) === address.v4));
}

function linkMatches(href, address) {
  // Whether a link's resolved URL is the address (the browser's own parser reads the host).
  try {
    const url = new URL_(href);
    if (!hostIs(address, urlHostname(url))) return false;
    if (!address.path) return true;
    let path = toLower(urlPathname(url));
    try { path = toLower(decode(path)); } catch (e) { /* keep it encoded */ }
    return indexOf(path, address.path) === 0;
  } catch (e) {
    return false;
  }
}

function hasHost(address, text) {
  for (const host of address.hosts) if (host === text) return true;
  return false;
}

function commonElement(a, b) {
  // The nearest element holding both nodes.
  let el = isElement(a) ? a : parentElementOf(a);
  while (el && b !== el && !containsNode(el, b)) el = parentElementOf(el);
  return el;
}

const ABSOLUTE = /^\s*(?:[a-z][a-z0-9+.\-]*:|[\/\\]{2})/;
const ASCII_PLAIN = /^[\x20-\x7e]*$/;

function plainSpellings(address) {
  // How the address reads when the page writes it plainly (lower case).
  if (address.v4 === undefined && address.v6 === undefined) return address.hosts;
  const out = [];
  if (address.v4 !== undefined && address.v4 !== null) {
    const v = address.v4;
    push(out, ((v / 16777216) >>> 0) + "." + ((v >>> 16) & 255) + "." + ((v >>> 8) & 255) + "." + (v & 255));
  }
  if (address.v6) push(out, sliceText(address.v6, 1, -1));
  return out;
}

function addressSources(address, opts) {
  const out = [];
  const doc = document;
  const body = bodyOf(doc);
  if (!body || !address || !address.hosts) return out;
  const hard = address.v4 === undefined && address.v6 === undefined;
  const blockSelector = joinList(BLOCK_SELECTORS, ", ") + ", " + DIALOG_SELECTOR + ", p, li, div";
  const add = (el, snippet, kind, hidden) => {
    if (!el) return;
    push(out, {
      snippet: clip(snippet, 600),
      in_ugc: !!ugcRegion(el, opts.ugc),
      hidden: hidden || hiddenReason(el) !== null,
      in_dialog: !!closestAcross(el, DIALOG_SELECTOR),
      kind,
    });
  };
  const page = indexOfPage(doc, body);
  const placed = new Set_();
  const place = (el) => {
    if (!el || placed.has(el) || out.length >= 4) return;
    placed.add(el);
    add(el, textOf(closestAcross(el, blockSelector) || el, 900), "text", false);
  };
  if (bodyHas(body, page, address)) {
    // written plainly: only the text nodes holding it are read (and the elements around them,
    // for a path the markup breaks off)
    const plain = plainSpellings(address);
    const written = [];
    for (const spelling of plain) if (textHas(page, spelling)) push(written, spelling);
    if (written.length) {
      const walker = makeWalker(doc, body, SHOW_TEXT);
      let node, walked = 0;
      while ((node = walkNext(walker)) && walked < 50000 && out.length < 4) {
        walked++;
        const value = toLower(nodeValueOf(node) || "");
        let holds = false;
        for (const spelling of written) if (indexOf(value, spelling) >= 0) holds = true;
        if (!holds) continue;
        let el = parentElementOf(node);
        if (el && testRe(SKIP_TEXT, tagNameOf(el))) continue;
        let up = 0;
        while (el && up < 6 && !addressIn(textContentOf(el), address)) { el = parentElementOf(el); up++; }
        if (el && (up < 6 || addressIn(textContentOf(el), address))) place(el);
      }
    }
    if (!out.length) {
      // obfuscated: the text nodes folded one by one, joined; an occurrence is placed on the
      // nearest element holding all the nodes it spans
      const walker = makeWalker(doc, body, SHOW_TEXT);
      const starts = [], nodes = [];
      let folded = "", node, walked = 0;
      while ((node = walkNext(walker)) && walked < 50000) {
        walked++;
        const parent = parentElementOf(node);
        if (parent && testRe(SKIP_TEXT, tagNameOf(parent))) continue;
        const piece = addrFold(nodeValueOf(node) || "", hard);
        if (!piece) continue;
        push(starts, folded.length);
        push(nodes, node);
        folded += piece;
      }
      const nodeAt = (offset) => {
        let lo = 0, hi = starts.length - 1;
        while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= offset) lo = mid; else hi = mid - 1; }
        return nodes[lo];
      };
      for (const [start, end] of addressEnds(folded, address)) {
        if (out.length >= 4 || !nodes.length) break;
        place(commonElement(nodeAt(start), nodeAt(Math.max(start, end - 1))));
      }
    }
  }
  // comments: what an agent reading the page's source sees, and no person does
  const comments = makeWalker(doc, docElementOf(doc) || body, SHOW_COMMENT);
  let comment, counted = 0;
  while ((comment = walkNext(comments)) && out.length < 5 && counted < 2000) {
    counted++;
    const text = nodeValueOf(comment) || "";
    if (text.length >= 4 && addressIn(text, address)) add(parentElementOf(comment) || body, text, "comment", true);
  }
  // where the body's text does not reach: open shadow roots, same-origin frames' documents,
  // form fields' values (read only when neither the text nor a comment gave the address)
  if (!out.length) elsewhere(body, address, add, () => out.length);
  // links: candidates by their written target (the host written plainly or in a form that needs
  // folding; for an IP address any absolute target; relative ones when this page is on the
  // address's host), then resolved by the browser's own URL parser
  let here = "";
  try { here = urlHostname(new URL_(docURLOf(doc))); } catch (e) { here = ""; }
  const onHost = !!here && hostIs(address, here) && !!address.path;
  const seen = new Set_();
  const live = (a) => !seen.has(a) && isConnectedOf(a) && ownerDocumentOf(a) === doc && !!seen.add(a);
  const linkBlock = joinList(BLOCK_SELECTORS, ", ") + ", " + DIALOG_SELECTOR + ", p, li";
  const plainHosts = plainSpellings(address);
  let tried = 0;
  for (const [a, hrefLower, actionLower] of page.links) {
    if (out.length >= 6 || tried > 5000) break;
    const text = hrefLower || actionLower;
    if (!text) continue;
    const absolute = testRe(ABSOLUTE, text);
    let candidate = false;
    if (absolute) {
      for (const spelling of plainHosts) if (indexOf(text, spelling) >= 0) candidate = true;
      if (!candidate) candidate = !hard || !testRe(ASCII_PLAIN, text) || indexOf(text, "%") >= 0 || indexOf(text, "&") >= 0;
    } else {
      candidate = onHost && indexOf(text, address.path) >= 0;
    }
    if (!candidate) continue;
    tried++;
    const raw = getAttr(a, "href") || getAttr(a, "action") || "";
    if (!raw) continue;
    const href = resolve(raw, a);
    if (!linkMatches(href, address) || !live(a)) continue;
    add(a, textOf(closestAcross(a, linkBlock) || a, 900) + " " + href, "href", false);
  }
  // labelling attributes (aria-label, title, alt, aria-description)
  if (addressIn(page.labelsText, address)) {
    seen.clear();
    for (const [a] of page.labels) {
      if (out.length >= 6) break;
      const shown = [];
      for (const name of LABEL_ATTRS) { const v = getAttr(a, name); if (v) push(shown, v); }
      const text = joinList(shown, " ");
      if (addressIn(text, address) && live(a)) add(a, text, "attribute", false);
    }
  }
  return out;
}

const ELSEWHERE_ELEMENTS = 200000;
const ELSEWHERE_PLACES = "iframe, frame, object, input, textarea";

function elsewhere(root, address, add, found) {
  // The address in text the body's own text does not hold: open shadow roots (and theirs),
  // documents of same-origin frames, and the values of form fields. Each place is read whole
  // (folded like the page's text); at most a bounded number of elements is walked (the walk
  // only asks each element for its shadow root; frames and fields are found natively).
  const doc = ownerDocumentOf(root) || document;
  const queue = [[doc, root, 0]];
  let walked = 0;
  for (let q = 0; q < queue.length && walked < ELSEWHERE_ELEMENTS && found() < 4; q++) {
    const owner = queue[q][0], top = queue[q][1], depth = queue[q][2];
    const places = isElement(top) ? queryAll(top, ELSEWHERE_PLACES) : shadowQueryAll(top, ELSEWHERE_PLACES);
    for (let i = 0; i < places.length && found() < 4; i++) {
      const el = places[i];
      const t = tag(el);
      if (t === "input" || t === "textarea") {
        const value = String(instanceGet(valueGetters, el, "") || "");
        if (value.length >= 4 && addressIn(value, address)) add(el, value, "field", false);
      } else if (depth < 4) {
        const inner = frameParts(el)[1];
        const body = inner ? bodyOf(inner) : null;
        if (body) {
          const text = textContentOf(body) || "";
          if (addressIn(text, address)) add(el, text, "frame", false);
          push(queue, [inner, body, depth + 1]);
        }
      }
    }
    if (depth >= 8) continue;
    const walker = makeWalker(owner, top, SHOW_ELEMENT);
    for (let el = walkNext(walker); el && walked < ELSEWHERE_ELEMENTS; el = walkNext(walker)) {
      walked++;
      const shadow = shadowRootOf(el);
      if (!shadow) continue;
      const text = textContentOf(shadow) || "";
      if (addressIn(text, address)) add(el, text, "shadow", false);
      push(queue, [owner, shadow, depth + 1]);
    }
  }
}
