// The built-ins the reader uses, captured when `__pwLibrary()` runs: installed by an init script
// (before any page script) or run in Playwright's utility world, the reader keeps these and never
// asks the page's (patchable) prototypes again. Every other module uses these references only.
// Also the realm-safe accessors built on them (elements of a same-origin frame come from
// another realm).

const W = window;
const apply = Reflect.apply;
const getOwn = Object.getOwnPropertyDescriptor;
const uncurry = (fn) => (self, ...args) => apply(fn, self, args);
const getter = (proto, name) => {
  for (let p = proto; p; p = Object.getPrototypeOf(p)) {
    const d = getOwn(p, name);
    if (d && d.get) return uncurry(d.get);
  }
  return (self) => self[name];
};
const EP = Element.prototype, NP = Node.prototype, HP = HTMLElement.prototype;
const computedStyle = uncurry(W.getComputedStyle);
const styleValue = uncurry(CSSStyleDeclaration.prototype.getPropertyValue);
const rectOf = uncurry(EP.getBoundingClientRect);
const matchesSel = uncurry(EP.matches);
const getAttr = uncurry(EP.getAttribute);
const hasAttr = uncurry(EP.hasAttribute);
const queryAll = uncurry(EP.querySelectorAll);
const docQueryAll = uncurry(Document.prototype.querySelectorAll);
const docByTag = uncurry(Document.prototype.getElementsByTagName);  // live, cached by the browser
const byId = uncurry(Document.prototype.getElementById);
const containsNode = uncurry(NP.contains);
const rootOf = uncurry(NP.getRootNode);
const makeWalker = uncurry(Document.prototype.createTreeWalker);
const newRange = uncurry(Document.prototype.createRange);
const rangeSelectContents = uncurry(Range.prototype.selectNodeContents);
const rangeRectOf = uncurry(Range.prototype.getBoundingClientRect);
const walkNext = uncurry(TreeWalker.prototype.nextNode);
const fromPoint = uncurry(Document.prototype.elementFromPoint);
const shadowFromPoint = ShadowRoot.prototype.elementFromPoint ? uncurry(ShadowRoot.prototype.elementFromPoint) : null;
const parentElementOf = getter(NP, "parentElement");
const nodeTypeOf = getter(NP, "nodeType");
const nodeValueOf = getter(NP, "nodeValue");
const textContentOf = getter(NP, "textContent");
const ownerDocumentOf = getter(NP, "ownerDocument");
const isConnectedOf = getter(NP, "isConnected");
const baseURIOf = getter(NP, "baseURI");
const tagNameOf = getter(EP, "tagName");
const attributesOf = getter(EP, "attributes");
const shadowRootOf = getter(EP, "shadowRoot");
const clientWidthOf = getter(EP, "clientWidth");
const clientHeightOf = getter(EP, "clientHeight");
const htmlInnerText = getter(HP, "innerText");
const htmlEditable = getter(HP, "isContentEditable");
// SVG, MathML and other non-HTML elements have neither: their text content stands in.
// An HTML element of this or another (same-origin frame's) realm, told by its namespace.
const elementNamespace = getter(Element.prototype, "namespaceURI");
const isHTML = (el) => !!el && nodeTypeOf(el) === 1 && elementNamespace(el) === "http://www.w3.org/1999/xhtml";
const isTag = (el, ...names) => isHTML(el) && names.includes(toLower(tagNameOf(el)));
const innerTextOf = (el) => isHTML(el) ? htmlInnerText(el) : textContentOf(el);
const contentEditableOf = (el) => isHTML(el) && htmlEditable(el);
const hostOf = getter(ShadowRoot.prototype, "host");
const activeOf = getter(Document.prototype, "activeElement");
const shadowActiveOf = getter(ShadowRoot.prototype, "activeElement");
const docURLOf = getter(Document.prototype, "URL");
const bodyOf = getter(Document.prototype, "body");
const docElementOf = getter(Document.prototype, "documentElement");
const scrollWidthOf = getter(EP, "scrollWidth");
const scrollHeightOf = getter(EP, "scrollHeight");
const contentDocumentOf = getter(HTMLIFrameElement.prototype, "contentDocument");
const FORM_OWNERS = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement,
  HTMLOutputElement, HTMLFieldSetElement, HTMLObjectElement];
const formGetters = FORM_OWNERS.map((C) => [C, getter(C.prototype, "form")]);
const labelsGetters = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement,
  HTMLOutputElement, HTMLMeterElement, HTMLProgressElement].map((C) => [C, getter(C.prototype, "labels")]);
const valueGetters = [HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement, HTMLButtonElement]
  .map((C) => [C, getter(C.prototype, "value")]);
const inputFiles = getter(HTMLInputElement.prototype, "files");
const checkedOf = getter(HTMLInputElement.prototype, "checked");
const disabledGetters = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement]
  .map((C) => [C, getter(C.prototype, "disabled")]);
const readOnlyGetters = [HTMLInputElement, HTMLTextAreaElement].map((C) => [C, getter(C.prototype, "readOnly")]);
const formElementsOf = getter(HTMLFormElement.prototype, "elements");
const nameGetters = [HTMLInputElement, HTMLButtonElement, HTMLSelectElement, HTMLTextAreaElement]
  .map((C) => [C, getter(C.prototype, "name")]);
const multipleOf = getter(HTMLSelectElement.prototype, "multiple");
const URL_ = W.URL;
const toLower = uncurry(String.prototype.toLowerCase);
const indexOf = uncurry(String.prototype.indexOf);
const replaceText = uncurry(String.prototype.replace);
const sliceText = uncurry(String.prototype.slice);
const trimText = uncurry(String.prototype.trim);
const testRe = uncurry(RegExp.prototype.test);
const push = uncurry(Array.prototype.push);
const joinList = uncurry(Array.prototype.join);
const SHOW_TEXT = NodeFilter.SHOW_TEXT;
const SHOW_COMMENT = NodeFilter.SHOW_COMMENT;
const normalizeText = uncurry(String.prototype.normalize);
const execRe = uncurry(RegExp.prototype.exec);
const fromCharCode = String.fromCharCode;
const parseIntText = W.parseInt;
const urlHostname = getter(URL.prototype, "hostname");
const urlPathname = getter(URL.prototype, "pathname");
const innerW = () => W.innerWidth, innerH = () => W.innerHeight;

// Elements of a same-origin frame come from another realm: `instanceof` fails there, so the
// tag name (HTML namespace) stands in for the interface.
const TAG_OF = new Map([[HTMLInputElement, "input"], [HTMLButtonElement, "button"], [HTMLSelectElement, "select"],
  [HTMLTextAreaElement, "textarea"], [HTMLOutputElement, "output"], [HTMLFieldSetElement, "fieldset"],
  [HTMLObjectElement, "object"], [HTMLMeterElement, "meter"], [HTMLProgressElement, "progress"]]);
const instanceGet = (table, el, fallback) => {
  for (const [C, get] of table) if (el instanceof C) return get(el);
  if (!isElement(el) || el instanceof Element) return fallback;
  const t = tag(el);
  for (const [C, get] of table) if (TAG_OF.get(C) === t) { try { return get(el); } catch (e) { return fallback; } }
  return fallback;
};
// (a composed path ends with the window, which is no node: the getter throws there)
const isElement = (n) => { try { return !!n && nodeTypeOf(n) === 1; } catch (e) { return false; } };
const tag = (el) => toLower(tagNameOf(el));

// Captured for the modules after this one (user content, context, activation, hit testing,
// mutations, names, fields, pinning, masking, the selector engine).
const prevSiblingOf = getter(EP, "previousElementSibling");
const nextSiblingOf = getter(EP, "nextElementSibling");
const splitText = uncurry(String.prototype.split);
const SHOW_ELEMENT = NodeFilter.SHOW_ELEMENT;
const styleSheetsOf = getter(Document.prototype, "styleSheets");
const parentNodeOf = getter(NP, "parentNode");
const elementSlotOf = getter(EP, "assignedSlot");
const textSlotOf = getter(Text.prototype, "assignedSlot");
const clientRectsOf = uncurry(EP.getClientRects);
const clientLeftOf = getter(EP, "clientLeft");
const clientTopOf = getter(EP, "clientTop");
const contentWindowOf = getter(HTMLIFrameElement.prototype, "contentWindow");
const buttonTypeOf = getter(HTMLButtonElement.prototype, "type");
const scrollIntoViewIfNeeded = EP.scrollIntoViewIfNeeded ? uncurry(EP.scrollIntoViewIfNeeded) : null;
const XLINK = "http://www.w3.org/1999/xlink";
const getAttrNS = uncurry(EP.getAttributeNS);
const namespaceOf = getter(EP, "namespaceURI");
const HTML_NS = "http://www.w3.org/1999/xhtml";
const caretAt = Document.prototype.caretPositionFromPoint ? uncurry(Document.prototype.caretPositionFromPoint) : null;
const caretNodeOf = W.CaretPosition ? getter(CaretPosition.prototype, "offsetNode") : null;
const caretRange = Document.prototype.caretRangeFromPoint ? uncurry(Document.prototype.caretRangeFromPoint) : null;
const rangeStartOf = getter(Range.prototype, "startContainer");
const firstElementChildOf = getter(EP, "firstElementChild");
const takeRecords = uncurry(MutationObserver.prototype.takeRecords);
const recordTypeOf = getter(MutationRecord.prototype, "type");
const recordAttrOf = getter(MutationRecord.prototype, "attributeName");
const addedNodesOf = getter(MutationRecord.prototype, "addedNodes");
const removedNodesOf = getter(MutationRecord.prototype, "removedNodes");
const listLength = getter(NodeList.prototype, "length");
const listItem = uncurry(NodeList.prototype.item);
const recordTargetOf = getter(MutationRecord.prototype, "target");
const comparePosition = uncurry(NP.compareDocumentPosition);
const controlOf = getter(HTMLLabelElement.prototype, "control");
const Set_ = W.Set;
const labelsByTag = uncurry(Document.prototype.getElementsByTagName);
const endsWith = uncurry(String.prototype.endsWith);
// Event primitives captured now: a page that patches Event.prototype later cannot disarm pinning.
const preventDefault = uncurry(Event.prototype.preventDefault);
const composedPath = uncurry(Event.prototype.composedPath);
const isTrusted = (event) => event.isTrusted === true;  // unforgeable: an own, non-configurable property
const eventTarget = getter(Event.prototype, "target");
const cancelableOf = getter(Event.prototype, "cancelable");
const submitterOf = getter(SubmitEvent.prototype, "submitter");
const clientXOf = getter(MouseEvent.prototype, "clientX");
const clientYOf = getter(MouseEvent.prototype, "clientY");
const NavigateEvent_ = W.NavigateEvent;
const navDestinationOf = NavigateEvent_ ? getter(NavigateEvent_.prototype, "destination") : null;
const navUserInitiatedOf = NavigateEvent_ ? getter(NavigateEvent_.prototype, "userInitiated") : null;
const navTypeOf = NavigateEvent_ ? getter(NavigateEvent_.prototype, "navigationType") : null;
const destinationURLOf = W.NavigationDestination ? getter(NavigationDestination.prototype, "url") : null;
const defaultViewOf = getter(Document.prototype, "defaultView");
const decode = W.decodeURIComponent;
const replaceState = uncurry(History.prototype.replaceState);
const historyState = getter(History.prototype, "state");
const addListener = uncurry(EventTarget.prototype.addEventListener);
const removeListener = uncurry(EventTarget.prototype.removeEventListener);
const shadowQueryAll = uncurry(DocumentFragment.prototype.querySelectorAll);
const parseJSON = JSON.parse, toJSON = JSON.stringify;
const createEl = uncurry(Document.prototype.createElement);
const setAttr = uncurry(EP.setAttribute);
// Every frame-like element's window and document (hit testing, context, masking).
const frameGetters = [[HTMLIFrameElement, "iframe"], [W.HTMLFrameElement, "frame"], [HTMLObjectElement, "object"]]
  .filter(([C]) => !!C)
  .map(([C, t]) => [t, getter(C.prototype, "contentWindow"), getter(C.prototype, "contentDocument")]);
