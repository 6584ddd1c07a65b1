"""setup.py: builds tvmnode._ffi, the CPython extension, against libtvmnode.

Two ways to find the C library:

* TVMNODE_BUILD_DIR=<an autotools build tree>: the in-tree mode used by the
  tests. Headers come from that tree's source directory (abs_top_srcdir in
  its Makefile), the library from <build>/libtvmnode/.libs, and the
  extension gets an rpath to it, so nothing needs installing.
* otherwise pkg-config (tvmnode.pc): an installed libtvmnode.
"""
import glob
import os
import re
import shlex
import subprocess

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(
    os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src")) if f.endswith(".c")
)


def in_tree(build):
    build = os.path.abspath(build)
    src = os.path.dirname(HERE)  # the repository this python/ lives in
    makefile = os.path.join(build, "Makefile")
    if os.path.exists(makefile):
        with open(makefile) as f:
            m = re.search(r"^abs_top_srcdir = (.*)$", f.read(), re.M)
        if m:
            src = os.path.normpath(m.group(1).strip())
    libdir = os.path.join(build, "libtvmnode", ".libs")
    if not os.path.exists(os.path.join(libdir, "libtvmnode.so")):
        raise SystemExit(f"TVMNODE_BUILD_DIR={build}: no libtvmnode.so in {libdir} (run make)")
    return {
        "include_dirs": [os.path.join(src, "libtvmnode", "include")],
        "library_dirs": [libdir],
        "runtime_library_dirs": [libdir],
        "libraries": ["tvmnode"],
    }


def from_pkg_config():
    try:
        cflags = subprocess.check_output(["pkg-config", "--cflags", "tvmnode"], text=True)
        libs = subprocess.check_output(["pkg-config", "--libs", "tvmnode"], text=True)
        libdir = subprocess.check_output(
            ["pkg-config", "--variable=libdir", "tvmnode"], text=True).strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(
            "tvmnode: libtvmnode not found with pkg-config (install it, set "
            "PKG_CONFIG_PATH, or set TVMNODE_BUILD_DIR to a build tree): %s" % e)
    cfg = {"include_dirs": [], "library_dirs": [], "libraries": [],
           "runtime_library_dirs": [libdir] if libdir else [], "extra_compile_args": []}
    for tok in shlex.split(cflags):
        if tok.startswith("-I"):
            cfg["include_dirs"].append(tok[2:])
        else:
            cfg["extra_compile_args"].append(tok)
    for tok in shlex.split(libs):
        if tok.startswith("-L"):
            cfg["library_dirs"].append(tok[2:])
        elif tok.startswith("-l"):
            cfg["libraries"].append(tok[2:])
    return cfg


build_dir = os.environ.get("TVMNODE_BUILD_DIR")
cfg = in_tree(build_dir) if build_dir else from_pkg_config()
extra = cfg.pop("extra_compile_args", [])
extra += ["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
          "-Wno-cast-function-type"]
if os.environ.get("TVMNODE_PY_DEBUG"):
    extra += ["-O0", "-g"]

setup(
    ext_modules=[
        Extension(
            "tvmnode._ffi",
            sources=SOURCES,
            # the library's headers too: a changed ABI must rebuild the module
            depends=[os.path.join("src", "tnpy.h")] + sorted(
                h for d in cfg.get("include_dirs", [])
                for h in glob.glob(os.path.join(d, "tvmnode", "*.h"))),
            extra_compile_args=extra,
            **cfg,
        )
    ],
)
