"""Pictures of the page without its secrets: the boxes of password fields and of fields holding
a registered secret, painted over a screenshot or a live-view frame before it leaves the guard.

Why painted over the captured picture rather than hidden with a style while capturing: the page
owns its styles (an inline ``!important`` beats any sheet the guard adds, a script can flip a
password field to ``type=text`` or restyle it between two frames), but it cannot touch the
pixels once the browser has captured them. The boxes are read in Playwright's utility world
with the facts reader's own DOM primitives (a page that patches ``getBoundingClientRect`` cannot
move them), once before and once after the capture, and each field is painted over the span of
both places: a field the page moves during the capture is covered all along its way. A field
that ever was a password field in the document stays masked after the page makes it a text
field. Registered secrets never enter the page: the reader returns the text fields' values and
the guard compares them with its `SecretRegistry` here. When the guard has secrets, the reader also
returns the text nodes in the viewport with their boxes: a node (or a run of up to three
neighbouring nodes, a value split over elements) in which a secret shows is painted over too — a
page that writes a value back into its own text. When the boxes cannot be read the picture is not
sent (`MaskUnavailable`): fail closed.
"""

from __future__ import annotations

import io
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import Any

from pagewarden.observe._gather import Call, EngineMissing, FactsUnavailable, _read, _run

__all__ = ["MaskBoxes", "MaskUnavailable", "mask_boxes", "paint_masks"]

#: CSS pixels added around each box (anti-aliased borders, focus rings, a caret just outside).
PAD = 3
#: The colour painted over a masked field.
FILL = (32, 32, 32)


class MaskUnavailable(Exception):
    """The boxes to mask could not be read: the picture must not be sent."""


@dataclass(frozen=True, slots=True)
class MaskBoxes:
    """Boxes (x, y, width, height in viewport CSS px) to paint over, and the viewport they are in."""

    boxes: tuple[tuple[float, float, float, float], ...]
    viewport: tuple[int, int]

    def __add__(self, other: MaskBoxes) -> MaskBoxes:
        return MaskBoxes(self.boxes + other.boxes, self.viewport or other.viewport)


def _holds_secret(value: str, secrets: Any) -> bool:
    return bool(value) and secrets is not None and bool(secrets) and secrets.redact(value) != value


def mask_boxes(
    page: Any, secrets: Any, *, engine: str | None = None, lib: str | None = None
) -> Generator[Call, Any, MaskBoxes]:
    """Read the boxes to mask on `page` (a pipeline: drive it with the API's driver).

    `secrets` is the guard's `SecretRegistry` (or None); `engine` the facts reader's selector
    engine for the page's document (its utility world), else `lib` the reader an init script
    installed in the main world, else the reader passed inline. Raises `MaskUnavailable` when
    the page does not answer."""
    texts = secrets is not None and bool(secrets)
    try:
        data = None
        if engine:
            try:
                data = yield from _read(
                    page.main_frame, engine, "mask", {"lib": engine, "texts": texts}, document=True
                )
            except EngineMissing:
                data = None
        if data is None:
            data = yield from _run(page.evaluate, "mask", (), {"lib": lib, "texts": texts})
    except FactsUnavailable as exc:
        raise MaskUnavailable(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any failure to read means: do not send the picture
        raise MaskUnavailable(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}") from None
    if not isinstance(data, dict) or "fields" not in data:
        raise MaskUnavailable(f"the page gave no field boxes ({str(data)[:80]})")
    boxes = []
    for field in data.get("fields") or ():
        try:
            x, y, w, h = (float(v) for v in field["box"])
        except (KeyError, TypeError, ValueError):
            raise MaskUnavailable("a field box could not be read") from None
        if field.get("password") or _holds_secret(str(field.get("value") or ""), secrets):
            boxes.append((x, y, w, h))
    boxes += _text_boxes(data.get("texts") or (), secrets) if texts else []
    try:
        vw, vh = (int(v) for v in data.get("viewport") or (0, 0))
    except (TypeError, ValueError):
        vw, vh = 0, 0
    return MaskBoxes(tuple(boxes), (vw, vh))


def _text_boxes(texts: Any, secrets: Any) -> list[tuple[float, float, float, float]]:
    """The boxes of the text nodes in which a secret shows: alone, or with up to two following
    nodes (a value the page split over elements)."""
    nodes = []
    for item in texts if isinstance(texts, (list, tuple)) else ():
        try:
            x, y, w, h = (float(v) for v in item["box"])
            nodes.append(((x, y, w, h), str(item.get("text") or "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise MaskUnavailable("a text box could not be read") from None
    out: set[int] = set()
    for i in range(len(nodes)):
        joined = ""
        for j in range(i, min(i + 3, len(nodes))):
            joined += nodes[j][1]
            if _holds_secret(joined, secrets):
                out.update(range(i, j + 1))
                break
    return [nodes[i][0] for i in sorted(out)]


def _spans(masks: list[MaskBoxes]) -> list[MaskBoxes]:
    """Two reads of the same fields (before and after a capture, same count, same viewport):
    each field's box grown to span both places, so a field moving during the capture is covered
    all along its way, not only at its two ends."""
    if len(masks) != 2:
        return masks
    first, second = masks
    if len(first.boxes) != len(second.boxes) or first.viewport != second.viewport:
        return masks
    spans = []
    for (x1, y1, w1, h1), (x2, y2, w2, h2) in zip(masks[0].boxes, masks[1].boxes, strict=True):
        left, top = min(x1, x2), min(y1, y2)
        spans.append((left, top, max(x1 + w1, x2 + w2) - left, max(y1 + h1, y2 + h2) - top))
    return [MaskBoxes(tuple(spans), masks[0].viewport)]


def paint_masks(image: bytes, masks: Iterable[MaskBoxes], *, quality: int = 60) -> bytes:
    """`image` (PNG or JPEG of the viewport) with every box of `masks` painted over, in the
    image's own format. The scale from CSS px to image pixels is the image width over the
    viewport width (device scale factor, a screencast's downscaling)."""
    from PIL import Image, ImageDraw

    masks = _spans([m for m in masks if m.boxes])
    if not masks:
        return image
    with Image.open(io.BytesIO(image)) as opened:
        fmt = opened.format or "PNG"
        picture = opened.convert("RGB")
    draw = ImageDraw.Draw(picture)
    for mask in masks:
        vw, vh = mask.viewport
        sx = picture.width / vw if vw else 1.0
        sy = picture.height / vh if vh else sx
        for x, y, w, h in mask.boxes:
            left, top = (x - PAD) * sx, (y - PAD) * sy
            right, bottom = (x + w + PAD) * sx, (y + h + PAD) * sy
            if right < 0 or bottom < 0 or left > picture.width or top > picture.height:
                continue
            draw.rectangle(
                (max(0, left), max(0, top), min(picture.width, right), min(picture.height, bottom)), fill=FILL
            )
    out = io.BytesIO()
    if fmt == "JPEG":
        picture.save(out, "JPEG", quality=quality)
    else:
        picture.save(out, "PNG")
    return out.getvalue()
