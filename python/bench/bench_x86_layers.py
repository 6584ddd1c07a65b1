"""ResNet-8's (IC's) int8 convolution layers alone (--layers ic), the
pointwise layers of KWS, the wake word and VWW (--layers pw), or the 3x3
depthwise layers of KWS and VWW (--layers dw), or the large ResNet's
convolutions (--layers resnet-l), on process CPU time,
with the crt of this tree ("new") and of --base-src ("base") in one run,
at the CPU's best ISA level and capped at AVX2 (tn_crt_isa_limit; with
--avxvnni, this tree's also at AVX2 with AVX-VNNI): the time and GMAC/s
per layer shape, issue 30's kernel-level table.

Each side's crt is the file set codegen.compile lists for IC (its
archive's runtime/src; the base's as bench_x86.base_tree copies it),
compiled with a small layer driver at `cc -std=c99 -O2` (as bench_x86's
model drivers). The driver times each layer for --seconds a round (batches
of calls on CLOCK_PROCESS_CPUTIME_ID); --rounds rounds, the sides and
levels interleaved; each figure is the median over rounds. The layers run
with NHWC input, HWIO weights, "same" padding, per-channel multipliers
and an input zero point of -128 (io 128), as the model has them; every
side's outputs are hashed and must agree. The pointwise layers (1x1,
stride 1, unpadded) run on the side of this tree as the host archive runs
them, their weight packed once before timing (tn_crt_dense_s8_pack of the
[out, in] matrix, tn_crt_conv2d_s8_packed; the driver is compiled with
-DTN_BENCH_PACKED), and on the base as tn_crt_conv2d_s8 with HWIO weights
(--base-packed: packed as the new side, for a base that reads the packed
1x1 layout).
Prints a table; writes bench_x86_layers.json and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_aot import HostModel, sources  # noqa: E402
from bench_models import DEFAULT_MODELS  # noqa: E402
from bench_x86 import ISA_NAMES, base_tree, cpu_name  # noqa: E402

from tvmnode import codegen, frontend  # noqa: E402

# name, h, w, in_c, out_c, k, stride (IC's convolutions in order; the two
# 32x32 16 -> 16 layers of its first block are one shape)
LAYERS = [("conv 32x32 3->16", 32, 32, 3, 16, 3, 1),
          ("conv 32x32 16->16", 32, 32, 16, 16, 3, 1),
          ("conv 32x32 16->32 s2", 32, 32, 16, 32, 3, 2),
          ("conv 16x16 32->32", 16, 16, 32, 32, 3, 1),
          ("1x1 32x32 16->32 s2", 32, 32, 16, 32, 1, 2),
          ("conv 16x16 32->64 s2", 16, 16, 32, 64, 3, 2),
          ("conv 8x8 64->64", 8, 8, 64, 64, 3, 1),
          ("1x1 16x16 32->64 s2", 16, 16, 32, 64, 1, 2)]
# KWS's four pointwise layers (one shape), then the wake word's, then VWW's
# (its five 6x6 128->128 layers one shape)
PW_LAYERS = [("KWS 1x1 25x5 64->64", 25, 5, 64, 64, 1, 1),
             ("WW 1x1 28x1 40->128", 28, 1, 40, 128, 1, 1),
             ("WW 1x1 24x1 128->128", 24, 1, 128, 128, 1, 1),
             ("WW 1x1 15x1 128->128", 15, 1, 128, 128, 1, 1),
             ("WW 1x1 1x1 128->32", 1, 1, 128, 32, 1, 1),
             ("VWW 1x1 48x48 8->16", 48, 48, 8, 16, 1, 1),
             ("VWW 1x1 24x24 16->32", 24, 24, 16, 32, 1, 1),
             ("VWW 1x1 24x24 32->32", 24, 24, 32, 32, 1, 1),
             ("VWW 1x1 12x12 32->64", 12, 12, 32, 64, 1, 1),
             ("VWW 1x1 12x12 64->64", 12, 12, 64, 64, 1, 1),
             ("VWW 1x1 6x6 64->128", 6, 6, 64, 128, 1, 1),
             ("VWW 1x1 6x6 128->128", 6, 6, 128, 128, 1, 1),
             ("VWW 1x1 3x3 128->256", 3, 3, 128, 256, 1, 1),
             ("VWW 1x1 3x3 256->256", 3, 3, 256, 256, 1, 1)]
# depthwise 3x3 layers (a name starting "DW": groups = channels, weights
# [k, k, 1, c]): KWS's (four of one shape), then VWW's shapes
DW_LAYERS = [("DW KWS 25x5x64", 25, 5, 64, 64, 3, 1),
             ("DW VWW 48x48x8", 48, 48, 8, 8, 3, 1),
             ("DW VWW 48x48x16 s2", 48, 48, 16, 16, 3, 2),
             ("DW VWW 24x24x32", 24, 24, 32, 32, 3, 1),
             ("DW VWW 24x24x32 s2", 24, 24, 32, 32, 3, 2),
             ("DW VWW 12x12x64", 12, 12, 64, 64, 3, 1),
             ("DW VWW 12x12x64 s2", 12, 12, 64, 64, 3, 2),
             ("DW VWW 6x6x128", 6, 6, 128, 128, 3, 1),
             ("DW VWW 6x6x128 s2", 6, 6, 128, 128, 3, 2),
             ("DW VWW 3x3x256", 3, 3, 256, 256, 3, 1)]
# the large ResNet's (mlcommons/tiny's pretrainedResnet_large_int8)
# convolutions in order, one line a shape (its two 32x32 40 -> 40 layers
# one shape)
RESNET_L_LAYERS = [("L conv 32x32 3->40", 32, 32, 3, 40, 3, 1),
                   ("L conv 32x32 40->40", 32, 32, 40, 40, 3, 1),
                   ("L conv 32x32 40->80 s2", 32, 32, 40, 80, 3, 2),
                   ("L conv 16x16 80->80", 16, 16, 80, 80, 3, 1),
                   ("L 1x1 32x32 40->80 s2", 32, 32, 40, 80, 1, 2),
                   ("L conv 16x16 80->160 s2", 16, 16, 80, 160, 3, 2),
                   ("L conv 8x8 160->160", 8, 8, 160, 160, 3, 1),
                   ("L 1x1 16x16 80->160 s2", 16, 16, 80, 160, 1, 2)]
LAYER_SETS = {"ic": LAYERS, "pw": PW_LAYERS, "dw": DW_LAYERS,
              "resnet-l": RESNET_L_LAYERS, "all": LAYERS + PW_LAYERS}

DRIVER_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tvmnode/crt/kernels.h"
extern int tn_crt_isa_limit(int);
static double cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static const int L[][7] = {@LAYERS@};
/* argv: ISA level, seconds per layer; prints per layer: ns a call, hash */
int main(int argc, char **argv) {
  if (argc < 3) return 2;
  tn_crt_isa_limit(atoi(argv[1]));
  const double seconds = atof(argv[2]);
  for (size_t i = 0; i < sizeof L / sizeof L[0]; i++) {
    const int h = L[i][0], w = L[i][1], ci = L[i][2], co = L[i][3],
              k = L[i][4], s = L[i][5], dw = L[i][6];
    TnCrtConv2d g;
    memset(&g, 0, sizeof g);
    g.batch = 1, g.in_h = h, g.in_w = w, g.in_c = ci;
    g.out_h = (h + s - 1) / s, g.out_w = (w + s - 1) / s, g.out_c = co;
    g.k_h = g.k_w = k, g.stride_h = g.stride_w = s;
    g.dilation_h = g.dilation_w = 1, g.groups = dw ? ci : 1;
    const int pad = (g.out_h - 1) * s + k - h;
    g.pad_top = g.pad_left = pad > 0 ? pad / 2 : 0;
    const int32_t is[4] = {h * w * ci, w * ci, ci, 1};
    const int cg = dw ? 1 : ci; /* input channels a group */
    const int32_t ws[4] = {k * cg * co, cg * co, co, 1};
    const int32_t os[4] = {g.out_h * g.out_w * co, g.out_w * co, co, 1};
    memcpy(g.in_strides, is, sizeof is);
    memcpy(g.w_strides, ws, sizeof ws);
    memcpy(g.out_strides, os, sizeof os);
    const size_t nin = (size_t)h * w * ci, nw = (size_t)k * k * cg * co,
                 nout = (size_t)g.out_h * g.out_w * co;
    int8_t *in = malloc(nin), *wt = malloc(nw), *out = malloc(nout);
    int32_t *bias = malloc((size_t)co * 4), mult[256], shift[256];
    for (size_t j = 0; j < nin; j++) in[j] = (int8_t)((j * 37 + 11) % 255 - 127);
    for (size_t j = 0; j < nw; j++) wt[j] = (int8_t)((j * 53 + 7) % 255 - 127);
    for (int c = 0; c < co; c++) {
      tn_crt_quantize_multiplier(0.0009 + 0.00003 * c, &mult[c], &shift[c]);
      bias[c] = c * 211 - 3000;
    }
    const TnCrtQuant q = {.input_offset = 128, .output_offset = -5,
                          .act_min = -128, .act_max = 127, .per_channel = 1,
                          .multiplier = mult, .shift = shift};
    TnCrtStatus (*run)(const TnCrtConv2d *, const TnCrtQuant *,
                       const int8_t *, const int8_t *, const int32_t *,
                       int8_t *, void *, size_t) = tn_crt_conv2d_s8;
#ifdef TN_BENCH_PACKED
    if (k == 1 && s == 1) { /* the weight packed, as the host archive has it */
      int8_t *m = malloc(nw), *pk = malloc(nw);
      for (int o = 0; o < co; o++)
        for (int c = 0; c < ci; c++) m[o * ci + c] = wt[c * co + o];
      if (tn_crt_dense_s8_pack(co, ci, m, pk) != TN_CRT_OK) return 1;
      free(wt), free(m);
      wt = pk, run = tn_crt_conv2d_s8_packed;
    }
#endif
    if (run(&g, &q, in, wt, bias, out, NULL, 0) != TN_CRT_OK) return 1;
    double t0 = cpu(), t;
    long n = 0;
    do {
      for (int b = 0; b < 16; b++, n++)
        if (run(&g, &q, in, wt, bias, out, NULL, 0) != TN_CRT_OK)
          return 1;
      t = cpu() - t0;
    } while (t < seconds);
    unsigned hash = 2166136261u;
    for (size_t j = 0; j < nout; j++) hash = (hash ^ (uint8_t)out[j]) * 16777619u;
    printf("%.1f %08x\n", t / (double)n * 1e9, hash);
    free(in), free(wt), free(out), free(bias);
  }
  return 0;
}
"""


def crt_of(arch: codegen.Archive, src: str, workdir: str) -> str:
    """The archive of arch exported with the crt of the source tree src."""
    old = os.environ.get("TVMNODE_SOURCE_DIR")
    os.environ["TVMNODE_SOURCE_DIR"] = src
    try:
        os.makedirs(workdir, exist_ok=True)
        return HostModel(arch, workdir, cflags=("-O2",)).dir
    finally:
        if old is None:
            del os.environ["TVMNODE_SOURCE_DIR"]
        else:
            os.environ["TVMNODE_SOURCE_DIR"] = old


def build(archive: str, workdir: str, layers: List, packed: bool) -> str:
    src = os.path.join(workdir, "layers.c")
    text = DRIVER_C.replace("@LAYERS@", ", ".join(
        "{%d, %d, %d, %d, %d, %d, %d}" % (*l[1:], l[0].startswith("DW"))
        for l in layers))
    with open(src, "w") as f:
        f.write(text)
    exe = os.path.join(workdir, "layers")
    subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-O2",
                    *(["-DTN_BENCH_PACKED"] if packed else []),
                    "-I" + os.path.join(archive, "runtime", "include"), src,
                    *sources(archive)["crt"], "-o", exe, "-lm"], check=True)
    return exe


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--new-src", default=str(HERE.parents[1]))
    ap.add_argument("--base-src", default=None, help="a source tree to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.05)
    ap.add_argument("--out", default=".")
    ap.add_argument("--base-packed", action="store_true",
                    help="the base's pointwise layers on packed weights too")
    ap.add_argument("--avxvnni", action="store_true",
                    help="the new side capped at AVX2 with AVX-VNNI (avxvnni) too")
    ap.add_argument("--layers", choices=sorted(LAYER_SETS), default="ic",
                    help="IC's convolutions, KWS's and the wake word's pointwise ones, KWS's and VWW's depthwise ones, the large ResNet's convolutions, or IC and pointwise")
    args = ap.parse_args()
    layers = LAYER_SETS[args.layers]
    arch = codegen.compile(frontend.load_model(
        str(Path(args.models) / "pretrainedResnet_quant.tflite")), name="ic")
    levels = {"": ISA_NAMES["vnni"], "@avx2": ISA_NAMES["avx2"]}
    if args.avxvnni:  # the new side only: a base crt may not know the cap
        levels["@avxvnni"] = ISA_NAMES["avxvnni"]
    with tempfile.TemporaryDirectory(prefix="bench_x86_layers") as tmp:
        sides = {"new": args.new_src}
        if args.base_src:
            sides["base"] = base_tree(args.base_src, args.new_src, tmp)
        exes = {k: build(crt_of(arch, src, os.path.join(tmp, k)), os.path.join(tmp, k),
                         layers, k == "new" or args.base_packed)
                for k, src in sides.items()}
        runs = [(k, lv) for k in exes for lv in levels
                if k == "new" or lv != "@avxvnni"]
        ns: Dict[str, List[List[float]]] = {k + lv: [[] for _ in layers] for k, lv in runs}
        hashes: Dict[str, List[str]] = {}
        for r in range(args.rounds):
            for k, lv in (runs if r % 2 == 0 else list(reversed(runs))):
                lines = subprocess.run([exes[k], str(levels[lv]), str(args.seconds)],
                                       check=True, capture_output=True, text=True).stdout
                for i, line in enumerate(lines.split("\n")[:len(layers)]):
                    t, h = line.split()
                    ns[k + lv][i].append(float(t))
                    hashes.setdefault(layers[i][0], [])
                    if h not in hashes[layers[i][0]]:
                        hashes[layers[i][0]].append(h)
    med = {k: [statistics.median(v) for v in layers] for k, layers in ns.items()}
    cols = list(med)
    vx = "base@avx2" in cols and "new@avxvnni" in cols
    rows = ["Process CPU time per call, one thread, median of %d rounds of %g s; %s; "
            "@avx2: the ISA forms capped at AVX2; GMAC/s = MACs / time." % (
                args.rounds, args.seconds, cpu_name()), "",
            "| layer | MACs | " + " | ".join("%s µs" % k for k in cols) +
            (" | new ÷ base | new@avx2 ÷ base@avx2" if "base" in cols else "") +
            (" | new@avxvnni ÷ base@avx2" if vx else "") +
            " | GMAC/s " + " / ".join(cols) + " | outputs agree |",
            "|---|---:|" + "---:|" * len(cols) + ("---:|---:|" if "base" in cols else "") +
            ("---:|" if vx else "") + "---:|---|"]
    for i, l in enumerate(layers):
        oh, ow = (l[1] + l[6] - 1) // l[6], (l[2] + l[6] - 1) // l[6]
        macs = oh * ow * l[4] * l[5] * l[5] * (1 if l[0].startswith("DW") else l[3])
        m = {k: med[k][i] for k in cols}
        rows.append("| %s | %s | %s%s%s | %s | %s |" % (
            l[0], "{:,}".format(macs), " | ".join("%.2f" % (m[k] / 1e3) for k in cols),
            " | %.2f | %.2f" % (m["new"] / m["base"], m["new@avx2"] / m["base@avx2"])
            if "base" in m else "",
            " | %.2f" % (m["new@avxvnni"] / m["base@avx2"]) if vx else "",
            " / ".join("%.1f" % (macs / m[k]) for k in cols),
            "yes" if len(hashes[l[0]]) == 1 else "NO"))
    text = "\n".join(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_x86_layers.json").write_text(json.dumps(
        {"cpu": cpu_name(), "rounds": args.rounds, "seconds": args.seconds,
         "layers": [l[0] for l in layers], "ns": ns, "median_ns": med,
         "hashes": hashes}, indent=1))
    (out / "bench_x86_layers.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
