"""tvmnode._plan_svg: a memory plan drawn as SVG, with the standard library only.

A plan is a dict (what the code generator reports for a model; see
render_svg). Each pool gets a panel: time (steps) runs across, addresses
down, one rectangle a buffer with its name and size written in it when
they fit and always in its tooltip. Lines mark the bytes the pool uses, its
limit and the lower bound, so a plan can be judged at a glance. Each panel
is scaled on its own, so a 100-byte scratch pool and a 1 MiB arena are both
legible; a limit far above the plan is drawn at the panel's foot and said
to be off the scale, rather than squeezing the buffers into a sliver.

The module imports nothing from the C extension, so that it can be used
(and tested) without a build.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Tuple
from xml.sax.saxutils import escape, quoteattr

__all__ = ["render_svg", "KIND_COLOURS"]

# Fill and stroke per kind of buffer; anything else is drawn as "other".
KIND_COLOURS: Dict[str, Tuple[str, str]] = {
    "input": ("#9ecae1", "#2171b5"),
    "output": ("#fcae91", "#cb181d"),
    "intermediate": ("#a1d99b", "#238b45"),
    "scratch": ("#fdd49e", "#d94801"),
    "constant": ("#dadaeb", "#6a51a3"),
    "other": ("#d9d9d9", "#525252"),
}

_LEFT = 96          # room for the byte labels
_RIGHT = 220        # room for the line labels
_TOP = 74           # room for the title
_PANEL_H = 280      # plot height of one pool
_PANEL_GAP = 86     # between panels: the step axis and the next title
_LEGEND_H = 40
_FONT = 11
_CHAR_W = 6.3       # average glyph width at _FONT px, for fitting labels
_OFF_SCALE = 1.5    # a limit more than this times the plan is off the scale


def _human(n: float) -> str:
    """Bytes as people read them: 512 B, 1.5 KiB, 2 MiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= scale:
            return f"{n / scale:.2f}".rstrip("0").rstrip(".") + " " + unit
    return f"{int(n)} B"


def _byte_step(extent: int, most: int = 8) -> int:
    """A power of two that cuts [0, extent] into at most `most` ticks, so
    that every tick reads exactly in B, KiB or MiB."""
    step = 1
    while extent / step > most:
        step *= 2
    return step


def _step_step(steps: int, most: int = 20) -> int:
    """1, 2, 5, 10, 20, 50, ...: at most `most` step labels."""
    base = 1
    while True:
        for m in (1, 2, 5):
            if steps / (base * m) <= most:
                return base * m
        base *= 10


def _fit_label(name: str, size: int, width: float, height: float) -> str:
    """The longest of "name (size)", "name" or a cut name that fits the
    rectangle, or "" when none does (the tooltip still has it all)."""
    if height < _FONT + 2:
        return ""
    room = int((width - 4) / _CHAR_W)
    for text in (f"{name} ({_human(size)})", name):
        if len(text) <= room:
            return text
    if room >= 4:
        return name[: room - 1] + "\u2026"
    return ""


def _attrs(**kw: Any) -> str:
    out = []
    for key, value in kw.items():
        if value is None or value == "":
            continue
        if isinstance(value, float):
            value = f"{value:.2f}".rstrip("0").rstrip(".")
        out.append(f"{key.rstrip('_').replace('_', '-')}={quoteattr(str(value))}")
    return " ".join(out)


def _text(x: float, y: float, s: str, **kw: Any) -> str:
    return f"<text {_attrs(x=float(x), y=float(y), **kw)}>{escape(s)}</text>"


def _line(x1: float, y1: float, x2: float, y2: float, **kw: Any) -> str:
    ends = _attrs(x1=float(x1), y1=float(y1), x2=float(x2), y2=float(y2))
    return f"<line {ends} {_attrs(**kw)}/>"


def _check(plan: Mapping[str, Any]) -> Tuple[List[Mapping[str, Any]],
                                             List[Mapping[str, Any]], int]:
    pools = list(plan.get("pools") or [{"name": "arena", "size": 0, "limit": 0}])
    buffers = list(plan.get("buffers") or [])
    steps = int(plan.get("steps") or 0)
    for i, b in enumerate(buffers):
        pool = int(b.get("pool", 0))
        if not 0 <= pool < len(pools):
            raise ValueError(f"buffer {i} ({b.get('name')!r}) is in pool {pool}; "
                             f"there are {len(pools)} pools")
        if int(b["first"]) > int(b["last"]) or int(b["first"]) < 0:
            raise ValueError(f"buffer {i} ({b.get('name')!r}) has steps "
                             f"{b['first']}..{b['last']}")
        steps = max(steps, int(b["last"]) + 1)
    return pools, buffers, max(steps, 1)


def _panel(out: List[str], p: int, pool: Mapping[str, Any],
           buffers: Sequence[Tuple[int, Mapping[str, Any]]], steps: int,
           step_names: Sequence[str], lower_bound: int, npools: int,
           y0: float, width: float) -> None:
    name = str(pool.get("name", f"pool {p}"))
    limit = int(pool.get("limit") or 0)
    used = int(pool.get("size") or 0)
    top = max([used] + [int(b["offset"]) + int(b["size"]) for _, b in buffers])
    shown_lb = lower_bound if p == 0 and lower_bound > 0 else 0
    extent = max(top, shown_lb, 1)
    limit_on_scale = 0 < limit <= extent * _OFF_SCALE
    if limit_on_scale:
        extent = max(extent, limit)
    sy = _PANEL_H / extent
    sx = width / steps
    x0 = _LEFT

    head = f"pool {p}: {name} \u2014 {_human(used)} used"
    if limit:
        head += f" of {_human(limit)} ({100.0 * used / limit:.1f}%)"
    out.append(_text(x0, y0 - 10, head, class_="pool-title",
                     font_weight="bold", font_size=_FONT + 2))
    plot = _attrs(x=x0, y=y0, width=float(width), height=_PANEL_H,
                  fill="#fbfbfb", stroke="#999", class_="plot")
    out.append(f"<rect {plot}/>")

    # byte axis: addresses grow downwards, as in a memory map
    tick = _byte_step(extent)
    for v in range(0, extent + 1, tick):
        y = y0 + v * sy
        out.append(_line(x0 - 4, y, x0, y, stroke="#666"))
        out.append(_line(x0, y, x0 + width, y, stroke="#eee"))
        out.append(_text(x0 - 6, y + 4, _human(v), text_anchor="end",
                         font_size=_FONT, class_="byte-label"))
    # step axis, with the step's name in its tooltip
    yb = y0 + _PANEL_H
    tick = _step_step(steps)
    for s in range(0, steps, tick):
        x = x0 + (s + 0.5) * sx
        out.append(_line(x, yb, x, yb + 4, stroke="#666"))
        label = _text(x, yb + 16, str(s), text_anchor="middle",
                      font_size=_FONT, class_="step-label")
        if s < len(step_names):
            tip = f"<title>{escape(step_names[s])}</title></text>"
            label = label[: -len("</text>")] + tip
        out.append(label)
    out.append(_text(x0 + width / 2, yb + 32, "step", text_anchor="middle",
                     font_size=_FONT, fill="#444"))
    yc = y0 + _PANEL_H / 2
    out.append(_text(16, yc, "offset", text_anchor="middle", font_size=_FONT,
                     fill="#444", transform=f"rotate(-90 16 {yc:g})"))

    for i, b in buffers:
        kind = str(b.get("kind") or "other")
        fill, stroke = KIND_COLOURS.get(kind, KIND_COLOURS["other"])
        off, size = int(b["offset"]), int(b["size"])
        first, last = int(b["first"]), int(b["last"])
        bname = str(b.get("name", f"buffer {i}"))
        x, w = x0 + first * sx, (last - first + 1) * sx
        y, h = y0 + off * sy, max(size * sy, 1.0)
        tip = (f"{bname}\n{_human(size)} ({size} bytes) at offset {off}\n"
               f"steps {first}..{last}\n{kind}")
        box = _attrs(x=x, y=y, width=w, height=h, fill=fill, stroke=stroke,
                     stroke_width=0.8, class_="buffer kind-" + kind)
        out.append(f'<g class="buffer"><rect {box}>'
                   f"<title>{escape(tip)}</title></rect>")
        label = _fit_label(bname, size, w, h)
        if label:
            out.append(_text(x + 3, y + min(h / 2, 20.0) + 4, label,
                             font_size=_FONT, class_="buffer-label"))
        out.append("</g>")

    # the pool's lines; their labels are nudged apart when the lines are close
    marks = [(used, "used", "#1f78b4", "6 3", f"used {_human(used)}")]
    if shown_lb:
        what = "lower bound" if npools == 1 else "lower bound (all pools)"
        marks.append((shown_lb, "lower-bound", "#33a02c", "2 3",
                      f"{what} {_human(shown_lb)}"))
    if limit:
        marks.append((limit, "limit", "#e31a1c", "", f"limit {_human(limit)}"
                      + ("" if limit_on_scale else " (off scale, below)")))
    marks.sort(key=lambda m: min(m[0] * sy, _PANEL_H))  # stable: used first
    next_free = -1e9
    for value, cls, colour, dash, text in marks:
        y = y0 + min(value * sy, _PANEL_H)
        out.append(_line(x0, y, x0 + width + 8, y, stroke=colour,
                         stroke_width=1.5, stroke_dasharray=dash, class_=cls))
        ty = max(y + 4, next_free)
        next_free = ty + _FONT + 3
        out.append(_text(x0 + width + 10, ty, text, font_size=_FONT,
                         fill=colour, class_=cls + "-label"))


def _legend(out: List[str], kinds: Sequence[str], y: float) -> None:
    x = float(_LEFT)
    for kind in kinds:
        fill, stroke = KIND_COLOURS[kind]
        swatch = _attrs(x=x, y=y, width=14, height=12, fill=fill,
                        stroke=stroke, class_="legend-swatch")
        out.append(f"<rect {swatch}/>")
        out.append(_text(x + 18, y + 10, kind, font_size=_FONT, class_="legend"))
        x += 30 + _CHAR_W * len(kind)
    for cls, colour, dash, text in (("used", "#1f78b4", "6 3", "used"),
                                    ("lower-bound", "#33a02c", "2 3", "lower bound"),
                                    ("limit", "#e31a1c", "", "limit")):
        out.append(_line(x, y + 6, x + 22, y + 6, stroke=colour, stroke_width=1.5,
                         stroke_dasharray=dash, class_="legend-" + cls))
        out.append(_text(x + 26, y + 10, text, font_size=_FONT, class_="legend"))
        x += 40 + _CHAR_W * len(text)


def render_svg(plan: Mapping[str, Any]) -> str:
    """The plan as an SVG document (a str).

    plan: {"model": str, "steps": int, "step_names": [str] (optional),
    "lower_bound": int, "pools": [{"name": str, "size": int, "limit": int
    (0: none)}], "buffers": [{"name": str, "pool": int, "offset": int,
    "size": int, "first": int, "last": int, "kind": str (optional: input,
    output, intermediate, scratch, constant)}]}. ValueError for a buffer in
    no pool or with first > last.
    """
    pools, buffers, steps = _check(plan)
    step_names = [str(s) for s in plan.get("step_names") or []]
    lower_bound = int(plan.get("lower_bound") or 0)
    model = str(plan.get("model", "model"))
    width = float(min(1400, max(480, steps * 36)))
    per_pool: List[List[Tuple[int, Mapping[str, Any]]]] = [[] for _ in pools]
    for i, b in enumerate(buffers):
        per_pool[int(b.get("pool", 0))].append((i, b))

    total_w = _LEFT + width + _RIGHT
    total_h = _TOP + len(pools) * (_PANEL_H + _PANEL_GAP) + _LEGEND_H
    head = _attrs(width=total_w, height=total_h,
                  viewBox=f"0 0 {total_w:g} {total_h:g}", font_family="sans-serif")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" {head}>']
    total = sum(int(p.get("size") or 0) for p in pools)
    summary = f"{_human(total)} in {len(pools)} pool{'s' if len(pools) != 1 else ''}"
    if lower_bound:
        summary += (f", lower bound {_human(lower_bound)} "
                    f"(plan {total / lower_bound:.3f}\u00d7 the bound)")
    summary += f"; {len(buffers)} buffers over {steps} steps"
    out.append(f"<title>{escape(model + ': ' + summary)}</title>")
    out.append(_text(_LEFT, 24, model, font_size=_FONT + 5, font_weight="bold",
                     class_="title"))
    out.append(_text(_LEFT, 44, summary, font_size=_FONT + 1, fill="#333",
                     class_="summary"))
    y = float(_TOP + 18)
    for p, pool in enumerate(pools):
        _panel(out, p, pool, per_pool[p], steps, step_names, lower_bound,
               len(pools), y, width)
        y += _PANEL_H + _PANEL_GAP
    kinds = sorted({str(b.get("kind") or "other") for b in buffers} & set(KIND_COLOURS),
                   key=list(KIND_COLOURS).index)
    if any(str(b.get("kind") or "other") not in KIND_COLOURS for b in buffers):
        kinds = sorted(set(kinds) | {"other"}, key=list(KIND_COLOURS).index)
    _legend(out, kinds, y - _PANEL_GAP + 48)
    out.append("</svg>")
    return "\n".join(out) + "\n"
