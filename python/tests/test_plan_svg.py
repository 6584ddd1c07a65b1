"""The memory-plan drawing (tvmnode._plan_svg): well-formed SVG with one
rectangle a buffer where the plan puts it, its labels, the pool's lines and
every name escaped. The module is loaded from its file, since it needs
nothing of the C extension."""
from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List

import pytest

NS = {"s": "http://www.w3.org/2000/svg"}


def _load() -> ModuleType:
    path = Path(__file__).resolve().parent.parent / "tvmnode" / "_plan_svg.py"
    spec = importlib.util.spec_from_file_location("tvmnode_plan_svg", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


plan_svg = _load()


def _buf(name: str, pool: int, offset: int, size: int, first: int, last: int,
         kind: str = "intermediate") -> Dict[str, Any]:
    return {"name": name, "pool": pool, "offset": offset, "size": size,
            "first": first, "last": last, "kind": kind}


def _plan() -> Dict[str, Any]:
    return {
        "model": "tiny",
        "steps": 6,
        "step_names": ["conv", "relu", "pool", "dense", "softmax", "copy"],
        "lower_bound": 3072,
        "pools": [{"name": "sram", "size": 3072, "limit": 4096},
                  {"name": "dram", "size": 1024, "limit": 0}],
        "buffers": [_buf("in", 0, 0, 1024, 0, 1, "input"),
                    _buf("mid", 0, 1024, 2048, 1, 3),
                    _buf("tmp", 0, 0, 1024, 2, 4, "scratch"),
                    _buf("out", 1, 0, 1000, 4, 5, "output")],
    }


def _render(plan: Dict[str, Any]) -> ET.Element:
    return ET.fromstring(plan_svg.render_svg(plan))


def _rects(root: ET.Element) -> Dict[str, ET.Element]:
    """The buffers' rectangles by the name their tooltip starts with."""
    out = {}
    for r in root.iterfind(".//s:rect", NS):
        if "buffer" in (r.get("class") or "").split():
            title = r.find("s:title", NS)
            assert title is not None and title.text
            out[title.text.split("\n")[0]] = r
    return out


def _geom(r: ET.Element) -> List[float]:
    return [float(r.get(k) or "nan") for k in ("x", "y", "width", "height")]


def _texts(root: ET.Element, cls: str) -> List[str]:
    """The texts of class `cls`, without their tooltips."""
    return [t.text or "" for t in root.iterfind(".//s:text", NS)
            if t.get("class") == cls]


def test_one_rect_per_buffer_where_the_plan_puts_it() -> None:
    root = _render(_plan())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    rects = _rects(root)
    assert sorted(rects) == ["in", "mid", "out", "tmp"]
    x_in, y_in, w_in, h_in = _geom(rects["in"])
    x_mid, y_mid, w_mid, h_mid = _geom(rects["mid"])
    x_tmp, y_tmp, w_tmp, h_tmp = _geom(rects["tmp"])
    assert y_mid > y_in            # a larger offset is drawn lower
    assert y_tmp == y_in           # the same offset, later
    assert x_mid > x_in and x_tmp > x_mid
    assert h_mid == pytest.approx(2 * h_in)
    assert h_tmp == pytest.approx(h_in)
    assert w_in == pytest.approx(w_tmp * 2 / 3)  # 2 steps against 3
    assert y_mid == pytest.approx(y_in + h_in)   # it starts where "in" ends
    # pool 1 is a panel of its own, below pool 0
    assert _geom(rects["out"])[1] > y_mid + h_mid
    assert "kind-input" in (rects["in"].get("class") or "")
    assert rects["in"].get("fill") != rects["mid"].get("fill")


def test_labels_and_tooltips() -> None:
    root = _render(_plan())
    labels = _texts(root, "buffer-label")
    assert "in (1 KiB)" in labels and "mid (2 KiB)" in labels
    assert "out (1000 B)" in labels
    title = _rects(root)["mid"].find("s:title", NS)
    assert title is not None and title.text
    assert "2048 bytes" in title.text and "offset 1024" in title.text
    assert "steps 1..3" in title.text
    # axes: byte offsets down the side, step numbers (with their names)
    assert "0 B" in _texts(root, "byte-label")
    assert "1 KiB" in _texts(root, "byte-label")
    assert _texts(root, "step-label")[:6] == ["0", "1", "2", "3", "4", "5"]
    tips = ["".join(t.itertext()) for t in root.iterfind(".//s:text/s:title", NS)]
    assert "softmax" in tips
    legend = _texts(root, "legend")
    assert {"input", "output", "intermediate", "scratch", "limit"} <= set(legend)


def test_used_limit_and_lower_bound_lines() -> None:
    root = _render(_plan())
    lines: Dict[str, List[ET.Element]] = {}
    for line in root.iterfind(".//s:line", NS):
        lines.setdefault(line.get("class") or "", []).append(line)
    assert len(lines["used"]) == 2               # one per pool
    assert len(lines["limit"]) == 1              # dram has none
    assert len(lines["lower-bound"]) == 1        # drawn once, in pool 0
    assert _texts(root, "lower-bound-label") == ["lower bound (all pools) 3 KiB"]
    assert _texts(root, "limit-label") == ["limit 4 KiB"]
    # in sram: the used line (3 KiB) is above the limit (4 KiB) and level
    # with the bottom of "mid", which ends there
    used_y = float(lines["used"][0].get("y1") or 0)
    limit_y = float(lines["limit"][0].get("y1") or 0)
    x, y, w, h = _geom(_rects(root)["mid"])
    assert used_y == pytest.approx(y + h)
    assert limit_y > used_y
    one = _plan()
    one["pools"] = one["pools"][:1]
    one["buffers"] = one["buffers"][:3]
    assert _texts(_render(one), "lower-bound-label") == ["lower bound 3 KiB"]


def test_names_are_escaped() -> None:
    plan = _plan()
    plan["model"] = 'm<&>"\''
    plan["pools"][0]["name"] = "<pool & co>"
    plan["buffers"][1]["name"] = "a<b>&c\"d'"
    plan["step_names"][2] = "</text><script>"
    text = plan_svg.render_svg(plan)
    assert "<script>" not in text and "<b>" not in text
    root = ET.fromstring(text)
    assert 'm<&>"\'' in _texts(root, "title")
    assert "a<b>&c\"d'" in _rects(root)
    assert any("<pool & co>" in t for t in _texts(root, "pool-title"))
    tips = ["".join(t.itertext()) for t in root.iterfind(".//s:text/s:title", NS)]
    assert "</text><script>" in tips


def test_scales_from_bytes_to_megabytes_and_hundreds_of_steps() -> None:
    steps = 500
    big = [_buf(f"t{i}", 0, (i % 4) * 262144, 262144, i, min(steps - 1, i + 3))
           for i in range(steps)]
    small = [_buf("s0", 1, 0, 48, 0, 10, "scratch"), _buf("s1", 1, 48, 52, 5, 20)]
    plan = {"model": "wide", "steps": steps, "lower_bound": 1 << 20,
            "pools": [{"name": "arena", "size": 1 << 20, "limit": 64 << 20},
                      {"name": "tcm", "size": 100, "limit": 128}],
            "buffers": big + small}
    root = _render(plan)
    width = float(root.get("width") or 0)
    height = float(root.get("height") or 0)
    assert 0 < width <= 2000 and 0 < height <= 2000
    rects = _rects(root)
    assert len(rects) == steps + 2
    for r in rects.values():
        x, y, w, h = _geom(r)
        assert w > 0 and h >= 1
        assert x + w <= width and y + h <= height
    # the 100-byte pool is drawn as tall as the 1 MiB one
    assert _geom(rects["s1"])[3] > 50
    assert len(_texts(root, "step-label")) <= 21
    limits = _texts(root, "limit-label")
    assert "limit 64 MiB (off scale, below)" in limits  # 64x the plan
    assert "limit 128 B" in limits


def test_bad_plans() -> None:
    plan = _plan()
    plan["buffers"][0]["pool"] = 2
    with pytest.raises(ValueError, match="buffer 0 .* pool 2"):
        plan_svg.render_svg(plan)
    plan = _plan()
    plan["buffers"][1]["first"] = 5
    with pytest.raises(ValueError, match="buffer 1"):
        plan_svg.render_svg(plan)
    empty = {"model": "empty", "steps": 0, "lower_bound": 0,
             "pools": [{"name": "arena", "size": 0, "limit": 0}], "buffers": []}
    assert _rects(_render(empty)) == {}
