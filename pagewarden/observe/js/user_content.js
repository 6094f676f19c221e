// User content: whether an element sits in a block the page's users wrote (a marker, or the
// marks of a post), and which block.

const UGC_SELECTORS = [
  "[data-ugc]", ".user-content", ".markdown-body", ".comment-body", ".comment-content", ".note-body",
  ".note-text", ".md", ".post-body", ".post-content", ".issue-description", ".description .md",
  ".message-body", ".review-text", ".usertext-body", "[itemprop=text]",
  "[itemprop=reviewBody]", "[role=comment]", "[itemprop~=comment]", "[itemprop~=review]",
  "[itemprop~=suggestedAnswer]", "[itemprop~=acceptedAnswer]", "[itemtype*='schema.org/Comment']",
  "[itemtype*='schema.org/Review']", "[itemtype*='schema.org/Answer']", "[itemtype*='schema.org/Question']",
  "[itemtype*='DiscussionForumPosting']", "[itemtype*='SocialMediaPosting']", "[itemtype*='UserComments']",
];
// Where a block of text ends for a snippet (not a judgement of who wrote it).
const BLOCK_SELECTORS = UGC_SELECTORS.concat(["article", "[role=article]", "blockquote"]);

// -- user content, by what marks it -------------------------------------------------------
// A tag name says nothing about who wrote a block: product cards, cart lines and news stories
// are <article>s too. A block is user content when a marker says so (UGC_SELECTORS: a
// user-content class, schema.org Comment / Review / Answer, role=comment, data-ugc, the policy's
// own `ugc_selectors`), or when a post-shaped block (an <article>, role=article, a <blockquote>,
// an articleBody, a class or id naming one comment / reply / review / answer / post / message)
// carries the marks of a post: a link marked rel=ugc; or an author or a time together with a
// reply control, rel=nofollow links, siblings of the same shape that carry an author or a time
// too (repeated posts), or a comments section around it; or any such block inside a comments
// section. Marks are counted for the nearest post-shaped block or comments section around them,
// so a story's comment thread does not make the story user content.
const POST_TOKEN = /^(?:comment|comment-item|reply|review|answer|post|message|forum-post|topic-post)$/i;
const POST_ID = /^(?:comment|post|reply|review|answer|message)s?[-_]?\d+$/i;
const SECTION_TOKEN = /^(?:comments|comment[-_]?(?:list|section|area|thread|s)|commentlist|replies|reply[-_]list|responses|discussion|disqus_thread|reviews|review[-_]list|answers|thread)$/i;
const SECTION_LABEL = /^\s*(?:comments|replies|reviews|discussion|responses|answers)\b/i;
// (segments of letters and digits between '-' / '_': no two ways to match, no backtracking blow-up)
const AUTHOR_TOKEN = /^(?:[a-z0-9]+[-_])*(?:author|byline|username|user|poster|commenter|nickname|avatar|handle)(?:[-_][a-z0-9]+)*$/i;
const REPLY_TOKEN = /^(?:[a-z0-9]+[-_])*repl(?:y|ies)(?:[-_][a-z0-9]+)*$/i;
const splitTokens = (value) => value ? splitText(sliceText(value, 0, 500), /\s+/) : [];
const anyToken = (el, re) => {
  for (const name of ["class", "id"]) for (const t of splitTokens(getAttr(el, name))) if (t && testRe(re, t)) return true;
  return false;
};
function postShaped(el) {
  if (!isHTML(el)) return false;
  const t = tag(el);
  if (t === "article" || t === "blockquote") return true;
  const role = getAttr(el, "role");
  if (role === "article" || role === "comment") return true;
  const itemprop = getAttr(el, "itemprop");
  if (itemprop && testRe(/(?:^|\s)articleBody(?:\s|$)/, itemprop)) return true;
  for (const t2 of splitTokens(getAttr(el, "class"))) if (t2 && testRe(POST_TOKEN, t2)) return true;
  const id = getAttr(el, "id");
  return !!id && testRe(POST_ID, id);
}
function commentSection(el) {
  if (!isHTML(el)) return false;
  if (anyToken(el, SECTION_TOKEN)) return true;
  const label = getAttr(el, "aria-label");
  return !!label && testRe(SECTION_LABEL, label);
}
function postMarks(block, explicit) {
  // The marks of a post under `block` that belong to it (not to a post or section inside it).
  const known = memo ? memo.posts.get(block) : undefined;
  if (known) return known;
  const marks = {author: false, time: false, reply: false, ugcLink: false, nofollow: false};
  const owned = (n) => {
    for (let up = parentOf(n); up && up !== block; up = parentOf(up)) {
      if (isElement(up) && (postShaped(up) || commentSection(up) || matchesSel(up, explicit))) return false;
    }
    return true;
  };
  scanRegion(block, (n) => {
    if (!isHTML(n)) return true;
    const t = tag(n);
    const rel = t === "a" || t === "link" ? toLower(getAttr(n, "rel") || "") : "";
    const itemprop = getAttr(n, "itemprop") || "";
    const author = testRe(/(?:^|\s)author(?:\s|$)/, rel) || testRe(/(?:^|\s)(?:author|creator)(?:\s|$)/, itemprop) ||
      hasAttr(n, "data-author") || hasAttr(n, "data-user") || hasAttr(n, "data-username") || anyToken(n, AUTHOR_TOKEN);
    const time = t === "time" || hasAttr(n, "datetime");
    const reply = anyToken(n, REPLY_TOKEN) ||
      ((t === "a" || t === "button") && testRe(/^\s*(?:reply|respond|quote)\b/i, textOf(n, 40)));
    const ugcLink = testRe(/(?:^|\s)ugc(?:\s|$)/, rel);
    const nofollow = testRe(/(?:^|\s)nofollow(?:\s|$)/, rel);
    if (!(author || time || reply || ugcLink || nofollow) || !owned(n)) return true;
    if (author) marks.author = true;
    if (time) marks.time = true;
    if (reply) marks.reply = true;
    if (ugcLink) marks.ugcLink = true;
    if (nofollow) marks.nofollow = true;
    return !(marks.author && marks.time && marks.reply && marks.ugcLink);
  });
  if (memo) memo.posts.set(block, marks);
  return marks;
}
function sameShape(a, b) {
  return isHTML(b) && tag(a) === tag(b) && (getAttr(a, "class") || "") === (getAttr(b, "class") || "") &&
    (getAttr(a, "role") || "") === (getAttr(b, "role") || "");
}
function repeatedPost(block, explicit) {
  // A sibling of the same shape (or, for a post wrapped alone in a list item, the list item's)
  // that carries an author or a time of its own.
  let node = block;
  const up = parentOf(block);
  if (up && isElement(up) && prevSiblingOf(block) === null && nextSiblingOf(block) === null && tag(up) === "li") node = up;
  for (const step of [prevSiblingOf, nextSiblingOf]) {
    let sib = step(node);
    for (let i = 0; sib && i < 3; i++, sib = step(sib)) {
      if (!sameShape(node, sib)) continue;
      const post = node === block ? sib : firstElementChildOf(sib);
      if (!post || !sameShape(block, post)) continue;
      const marks = postMarks(post, explicit);
      if (marks.author || marks.time) return true;
    }
  }
  return false;
}
function inCommentSection(block) {
  let i = 0;
  for (let up = parentOf(block); up && i < 6; up = parentOf(up), i++) if (isElement(up) && commentSection(up)) return true;
  return false;
}
function postEvidence(block, explicit) {
  // Why `block` (post-shaped) is user content, or "" when nothing marks it.
  const marks = postMarks(block, explicit);
  if (marks.ugcLink) return "rel=ugc links";
  if (inCommentSection(block)) return "inside a comments section";
  if (!(marks.author || marks.time)) return "";
  const who = marks.author ? "an author" : "a time";
  if (marks.reply) return who + " and a reply control";
  if (marks.nofollow) return who + " and rel=nofollow links";
  if (repeatedPost(block, explicit)) return who + ", repeated like its siblings";
  return "";
}
function ugcRegion(el, extra) {
  // The user-content block around `el`: {node, hit} (hit: the marker or the marks), or null.
  const list = UGC_SELECTORS.concat(extra || []);
  const explicit = joinList(list, ", ");
  let weighed = 0;
  for (let node = el; node; node = parentOf(node)) {
    if (!isElement(node)) continue;
    if (matchesSel(node, explicit)) {
      for (const s of list) {
        try { if (matchesSel(node, s)) return {node, hit: s}; } catch (e) { /* invalid custom selector */ }
      }
      return {node, hit: null};
    }
    if (weighed < 6 && postShaped(node)) {
      weighed++;
      const why = postEvidence(node, explicit);
      if (why) return {node, hit: tag(node) + ": " + why};
    }
  }
  // A link the site marks rel=ugc outside any post-shaped block: its paragraph or list item.
  const link = closestAcross(el, "a[rel~=ugc], area[rel~=ugc]");
  if (link) return {node: closestAcross(link, "p, li, div, section") || link, hit: "rel=ugc link"};
  return null;
}
