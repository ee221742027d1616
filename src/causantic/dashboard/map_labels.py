"""Where the topics map's labels go: laid out here, on the server, for every width the map is shown at.

The map is an SVG scaled to its card's width, so text of one size in the SVG's units reads smaller the
narrower the map (6 px at 400 px). Its labels are laid out for a few widths instead (:data:`BANDS`:
the map shown at least that many pixels wide, each 1.2 times the last): at a band's narrowest, a
label is :data:`LABEL_PX` high on screen (up to 1.2 times that at its widest); a label that would
cross an edge of the map is moved inside it, and a label is drawn only where it overlaps no label of
a larger topic (topics come largest first): the rest are named by their dots' titles on hover.

:func:`stylesheet` (served as ``/static/topicmap.css``) shows the layout whose band the map's width
falls in, with container queries: no script runs, so a browser with JavaScript off draws the same
map as one with it on. What is left to others: the map's points and topics' places
(:mod:`causantic.retrieval.topic_map`), and the dots (:mod:`causantic.dashboard.pages`).

A label's width is estimated from the widths of its characters in DejaVu Sans Bold (what
``system-ui`` at weight 600 is on Linux, wider than the Mac's and Windows' system faces), rounded up
in a few classes, so a label is never wider on screen than laid out here, only a little narrower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

# The map's SVG box (x, y, width, height): the points span 0-600 x 0-400 in it (pages.MAP_WIDTH, MAP_HEIGHT).
VIEWBOX = (-4.0, -4.0, 608.0, 408.0)
BORDER_PX = 2  # the map's left and right borders (style.css: svg.topicmap), outside its drawing
LABEL_PX = 12  # a label's font size on screen, at least, in the band the map's width falls in
LABEL_MIN_UNITS = 11.0  # and never under 11 SVG units (a wide map: larger than 12 px on screen)
DOT_PX, DOT_MIN_UNITS = 2.2, 2.6  # a dot's radius on screen, at least, and in SVG units
GAP_PX = 4  # between two labels, and between a label and the map's edge
BANDS = (200, 240, 288, 346, 415, 498, 597, 717)  # the map's width in px from which each layout applies
LABEL_CHARS = 28  # a label on the map: its topic's first terms within this many characters

# Widths of characters in em (DejaVu Sans Bold's, rounded up within each class); others count as 1 em.
_EM_CLASSES = {
    0.35: " ",
    0.4: "ijlIJ'.,:;/\\|",
    0.5: "f-!()[]tr_`",
    0.74: 'abcdeghknopqsuvxyz0123456789CEFLPSTYZ"*?${}',
    0.88: "ABDGHKNOQRUVX#+<=>^~&",
    1.11: "mwMW@%",
}
_EM = {char: em for em, chars in _EM_CLASSES.items() for char in chars}
_ASCENT, _DESCENT = 0.95, 0.25  # a label's extent above and below its baseline, in em


@dataclass(frozen=True, slots=True)
class MapLabel:
    """A topic's label on the map and its page: centred at ``x``, its baseline at ``y`` (SVG units),
    at its topic's centre until :func:`place` moves it."""

    link: str
    label: str
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class _Box:
    left: float
    top: float
    right: float
    bottom: float

    def near(self, other: _Box, gap: float) -> bool:
        return (
            self.left < other.right + gap
            and other.left < self.right + gap
            and self.top < other.bottom + gap
            and other.top < self.bottom + gap
        )


def short_label(label: str) -> str:
    """A topic's label on the map: its first terms that fit :data:`LABEL_CHARS`, whole."""
    if len(label) <= LABEL_CHARS:
        return label
    terms = label.split(", ")
    while len(terms) > 1 and len(", ".join(terms)) > LABEL_CHARS:
        terms.pop()
    return ", ".join(terms)[:LABEL_CHARS]


def text_em(text: str) -> float:
    """``text``'s width in em, at least what a semi-bold sans-serif draws."""
    return sum(_EM.get(char, 1.0) for char in text)


def _units_per_px(band: int) -> float:
    return VIEWBOX[2] / (band - BORDER_PX)


def font_units(band: int) -> float:
    """A label's font size in the SVG's units at ``band``: :data:`LABEL_PX` on screen at its narrowest."""
    return round(max(LABEL_MIN_UNITS, LABEL_PX * _units_per_px(band)), 2)


def place(labels: Sequence[MapLabel], band: int) -> list[MapLabel]:
    """The labels drawn when the map is ``band`` px wide (largest topic first): each moved inside the
    map if it would cross an edge, and left out where it would overlap one drawn before it."""
    size, gap = font_units(band), GAP_PX * _units_per_px(band)
    x0, y0, width, height = VIEWBOX
    inside = _Box(x0 + gap, y0 + gap, x0 + width - gap, y0 + height - gap)
    kept: list[_Box] = []
    out: list[MapLabel] = []
    for label in labels:
        half = text_em(label.label) * size / 2
        box = _Box(label.x - half, label.y - _ASCENT * size, label.x + half, label.y + _DESCENT * size)
        dx = max(inside.left - box.left, 0.0) + min(inside.right - box.right, 0.0)
        dy = max(inside.top - box.top, 0.0) + min(inside.bottom - box.bottom, 0.0)
        box = _Box(box.left + dx, box.top + dy, box.right + dx, box.bottom + dy)
        if any(box.near(other, gap) for other in kept):
            continue
        kept.append(box)
        out.append(replace(label, x=round(label.x + dx, 1), y=round(label.y + dy, 1)))
    return out


def layouts(labels: Sequence[MapLabel]) -> list[tuple[int, list[MapLabel]]]:
    """Each band's index and the labels drawn at it."""
    return [(n, place(labels, band)) for n, band in enumerate(BANDS)]


def stylesheet() -> str:
    """The container queries that show the layout of the band the map's width falls in, with its
    label and dot sizes (the map's card is the container: the SVG spans its width)."""
    rules = [
        "/* Made by causantic.dashboard.map_labels: one layout of the topic map's labels per band of widths. */",
        ".card.map { container: topicmap / inline-size; }",
        "svg.topicmap g.labels { display: none; }",
    ]
    for n, band in enumerate(BANDS):
        ends = BANDS[n + 1] if n + 1 < len(BANDS) else None
        query = " and ".join(
            ([f"(width >= {band}px)"] if n else []) + ([f"(width < {ends}px)"] if ends is not None else [])
        )
        dot = round(max(DOT_MIN_UNITS, DOT_PX * _units_per_px(band)), 2)
        rules.append(
            f"@container topicmap {query} {{ svg.topicmap g.labels.b{n} {{ display: inline; "
            f"font-size: {font_units(band)}px; }} svg.topicmap circle {{ r: {dot}px; }} }}"
        )
    return "\n".join(rules) + "\n"
