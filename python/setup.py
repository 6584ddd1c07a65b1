"""setup.py: builds tvmnode._ffi, the CPython extension, against libtvmnode.

Three ways to get the C library:

* TVMNODE_BUILD_DIR=<an autotools build tree>: the in-tree mode used by the
  tests and ./dev. Headers come from that tree's source directory
  (abs_top_srcdir in its Makefile), the library from
  <build>/libtvmnode/.libs, and the extension gets an rpath to it, so
  nothing needs installing. The package carries no copies of C files.
* TVMNODE_USE_PKG_CONFIG=1: an installed libtvmnode found with pkg-config
  (tvmnode.pc).
* otherwise (`pip install ./python`, `pip wheel ./python`): self-contained.
  build_ext runs the repository's own autotools build of the shared library
  (./autogen.sh first when configure is missing or older than configure.ac;
  a changed Makefile.am is make's own business, as in any build tree)
  in <build_temp>/libtvmnode and copies libtvmnode.so.0 next to the
  extension, which finds it through an rpath of $ORIGIN. The library is
  built by its own makefile rather than by compiling its sources into the
  extension so that its flags, symbol visibility and source list stay the
  ones `make` uses, and so that C frames in tracebacks still name
  libtvmnode. The C sources live outside python/: setup.py finds them in
  the checkout it sits in, or in TVMNODE_SOURCE_DIR. A checkout configured
  in place (`./configure && make` in the source folder) cannot be
  configured again elsewhere (autoconf refuses: "source directory already
  configured"), so there setup.py runs `make libtvmnode/libtvmnode.la` in
  the checkout itself, with the configuration it has.

In the self-contained and pkg-config modes build_py also copies the
microcontroller runtime (runtime/crt: include/, src/ and third_party/, every
.c and .h and the licence)
to tvmnode/crt and the installed C headers to tvmnode/include, where
tvmnode._crt_dir() and tvmnode._include_dir() find them. TVMNODE_PY_BUILD_BASE
moves setuptools' build folder (default python/build) elsewhere, so that
concurrent builds from one checkout do not share it.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext
from setuptools.command.build_py import build_py as _build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(
    os.path.join("src", f) for f in os.listdir(os.path.join(HERE, "src")) if f.endswith(".c")
)
LIB_SONAME = "libtvmnode.so.0"
# Debian's names; other systems have the same three under their own names
SYSTEM_DEPS = ("pkg-config and the development packages of GLib, libffi and yajl "
               "(Debian: apt-get install pkg-config libglib2.0-dev libffi-dev libyajl-dev)")


def source_dir(required):
    """The repository holding libtvmnode/ and runtime/: TVMNODE_SOURCE_DIR,
    else the checkout this python/ lives in."""
    cands = [os.environ.get("TVMNODE_SOURCE_DIR"), os.path.dirname(HERE)]
    for c in cands:
        if c and os.path.isfile(os.path.join(c, "configure.ac")) and \
                os.path.isdir(os.path.join(c, "libtvmnode", "include")):
            return os.path.abspath(c)
    if required:
        raise SystemExit(
            "tvmnode: the C sources (libtvmnode/, runtime/) are not beside %s; build from a "
            "checkout of the repository, or set TVMNODE_SOURCE_DIR to one" % HERE)
    return None


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
        "include_dirs": [os.path.join(src, d, "include")
                         for d in ("libtvmnode", "runtime/host", "runtime/crt")],
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
            "PKG_CONFIG_PATH, or unset TVMNODE_USE_PKG_CONFIG to build it into the "
            "package): %s" % e)
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


def bundled():
    # headers now; the library directory is filled in by build_ext once the
    # library is built (metadata-only runs of setup.py must not build it)
    src = source_dir(required=False)
    inc = [os.path.join(src, d, "include")
           for d in ("libtvmnode", "runtime/host", "runtime/crt")] if src else []
    return {"include_dirs": inc, "library_dirs": [], "libraries": ["tvmnode"],
            "extra_link_args": ["-Wl,-rpath,$ORIGIN"]}


# ---- the self-contained build ------------------------------------------------

def run_logged(cmd, cwd, log, what, env=None):
    with open(log, "a") as f:
        f.write("$ %s\n" % " ".join(shlex.quote(c) for c in cmd))
        f.flush()
        rc = subprocess.call(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.STDOUT)
    if rc != 0:
        with open(log) as f:
            tail = f.read()[-6000:]
        sys.stderr.write(tail)
        raise SystemExit("tvmnode: %s failed (exit %d); the whole log is %s. Building "
                         "libtvmnode needs a C11 compiler, make, %s; a checkout without "
                         "./configure also needs autoconf, automake and libtool."
                         % (what, rc, log, SYSTEM_DEPS))


def newer(a, b):
    return os.path.getmtime(a) > os.path.getmtime(b)


def configured_in_place(src):
    """Whether `src` was configured in the source folder itself: its
    config.status and Makefile are there."""
    return all(os.path.exists(os.path.join(src, f)) for f in ("config.status", "Makefile"))


def make_libtvmnode(tree, log):
    """make of the shared library alone in an autotools build tree; returns
    the folder holding libtvmnode.so.0, checked to load."""
    jobs = [] if "-j" in os.environ.get("MAKEFLAGS", "") else ["-j%d" % (os.cpu_count() or 1)]
    run_logged(["make"] + jobs + ["libtvmnode/libtvmnode.la"], tree, log,
               "make of libtvmnode")
    libdir = os.path.join(tree, "libtvmnode", ".libs")
    lib = os.path.join(libdir, LIB_SONAME)
    if not os.path.exists(lib):
        raise SystemExit("tvmnode: make left no %s in %s (configured with "
                         "--disable-shared?)" % (LIB_SONAME, libdir))
    # a shared library links with undefined symbols; such a one must fail
    # here, not when the installed package is first imported
    check = subprocess.run([sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])",
                            lib], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check.returncode != 0:
        raise SystemExit("tvmnode: the libtvmnode just built does not load (is the source "
                         "tree mid-edit?): %s" % (check.stdout.strip().splitlines() or ["?"])[-1])
    return libdir


def build_libtvmnode(src, build):
    """configure + make of the shared library alone, out of tree in `build`;
    returns the folder holding libtvmnode.so. Incremental: make decides what
    to rebuild, configure runs again only when its arguments change. A
    source folder configured in place is built where it is: autoconf
    refuses a second, out-of-tree configuration of it."""
    os.makedirs(build, exist_ok=True)
    log = os.path.join(build, "build.log")
    open(log, "w").close()
    if configured_in_place(src):
        return make_libtvmnode(src, log)
    configure = os.path.join(src, "configure")
    stale = not os.path.exists(configure) or \
        not os.path.exists(os.path.join(src, "Makefile.in")) or \
        newer(os.path.join(src, "configure.ac"), configure)
    if stale:
        if shutil.which("autoreconf") is None:
            raise SystemExit("tvmnode: %s has no up-to-date ./configure and autoreconf is "
                             "missing: install autoconf, automake and libtool" % src)
        run_logged(["sh", os.path.join(src, "autogen.sh")], src, log, "./autogen.sh")
    missing = [m for m in ("glib-2.0", "libffi", "yajl")
               if shutil.which("pkg-config") is None or
               subprocess.call(["pkg-config", "--exists", m]) != 0]
    if missing:
        raise SystemExit("tvmnode: building libtvmnode needs %s; not found with "
                         "pkg-config: %s" % (SYSTEM_DEPS, ", ".join(missing)))
    args = [configure, "--disable-static", "--enable-shared"]
    env = dict(os.environ)
    if "CFLAGS" not in env:
        # no debug info: it makes the wheel several times larger, and tracebacks
        # name C frames through the dynamic symbol table anyway
        env["CFLAGS"] = "-O0 -g" if env.get("TVMNODE_PY_DEBUG") else "-O2"
    stamp = os.path.join(build, "tvmnode-configure.args")
    want = "\n".join(args + ["CFLAGS=" + env["CFLAGS"]])
    have = open(stamp).read() if os.path.exists(stamp) else None
    if have != want or not os.path.exists(os.path.join(build, "Makefile")):
        run_logged(args, build, log, "configure of libtvmnode", env)
        with open(stamp, "w") as f:
            f.write(want)
    return make_libtvmnode(build, log)


def copy_files(src, dst, pattern):
    """Copy the files matching `pattern` below `src` to `dst`, keeping the
    folders."""
    for f in sorted(glob.glob(os.path.join(src, "**", pattern), recursive=True)):
        out = os.path.join(dst, os.path.relpath(f, src))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copyfile(f, out)


class build_py(_build_py):
    """Adds the C files the package carries: tvmnode/crt (the crt's include/
    and src/) and tvmnode/include (what `make install` puts under
    $includedir: libtvmnode's, the host executor's and the crt's headers).
    Both are emptied first, in every mode: a file deleted from the sources,
    or a copy left by a build of another mode in the same build folder,
    must not end up in the package."""

    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "tvmnode")
        for sub in ("crt", "include"):
            shutil.rmtree(os.path.join(pkg, sub), ignore_errors=True)
        if MODE == "in-tree":
            return  # tvmnode._crt_dir() reads the source tree
        src = source_dir(required=MODE == "bundled")
        if src is None:
            return
        crt = os.path.join(src, "runtime", "crt")
        # third_party: nanopb's runtime, which src/session_nanopb.c includes
        for sub in ("include", "src", "third_party"):
            for pattern in ("*.c", "*.h", "LICENSE*"):
                copy_files(os.path.join(crt, sub), os.path.join(pkg, "crt", sub), pattern)
        for inc in ("libtvmnode/include", "runtime/host/include", "runtime/crt/include"):
            copy_files(os.path.join(src, inc), os.path.join(pkg, "include"), "*.h")


class build_ext(_build_ext):
    """In the self-contained mode, builds libtvmnode first and puts it next
    to the extension. The modes link the extension differently (rpath
    $ORIGIN or a build tree's folder) from the same sources, so a build
    folder reused across modes must not keep the other mode's module:
    a stamp in build_temp names the mode and its library folders, and a
    change rebuilds the extension."""

    def run(self):
        libdir = None
        if MODE == "bundled":
            libdir = build_libtvmnode(source_dir(required=True), os.path.join(
                os.path.abspath(self.build_temp), "libtvmnode"))
            for ext in self.extensions:
                ext.library_dirs = [libdir] + list(ext.library_dirs)
                ext.depends = list(ext.depends) + [os.path.join(libdir, LIB_SONAME)]
        stamp = os.path.join(self.build_temp, "tvmnode-ext.mode")
        want = repr((MODE, [e.library_dirs + e.runtime_library_dirs for e in self.extensions]))
        if not os.path.exists(stamp) or open(stamp).read() != want:
            self.force = True
        out = os.path.dirname(self.get_ext_fullpath("tvmnode._ffi"))
        if os.path.exists(os.path.join(out, LIB_SONAME)):
            os.remove(os.path.join(out, LIB_SONAME))
        super().run()
        os.makedirs(self.build_temp, exist_ok=True)
        with open(stamp, "w") as f:
            f.write(want)
        if libdir:
            # one real file under the soname: a wheel cannot hold symlinks
            os.makedirs(out, exist_ok=True)
            shutil.copyfile(os.path.join(libdir, LIB_SONAME), os.path.join(out, LIB_SONAME))


build_dir = os.environ.get("TVMNODE_BUILD_DIR")
if build_dir:
    MODE, cfg = "in-tree", in_tree(build_dir)
elif os.environ.get("TVMNODE_USE_PKG_CONFIG"):
    MODE, cfg = "pkg-config", from_pkg_config()
else:
    MODE, cfg = "bundled", bundled()
extra = cfg.pop("extra_compile_args", [])
extra += ["-std=c11", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
          "-Wno-cast-function-type"]
if os.environ.get("TVMNODE_PY_DEBUG"):
    extra += ["-O0", "-g"]
elif MODE == "bundled":
    extra += ["-g0"]  # Python's own CFLAGS ask for debug info: a third of the wheel
options = {}
if os.environ.get("TVMNODE_PY_BUILD_BASE"):
    options["build"] = {"build_base": os.environ["TVMNODE_PY_BUILD_BASE"]}

setup(
    cmdclass={"build_py": build_py, "build_ext": build_ext},
    options=options,
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
