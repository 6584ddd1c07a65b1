"""tvmnode.cpp: compile C (or C++) given as a string into a shared library
with the system compiler, load it, and call its functions from Python.

    mod = tvmnode.cpp.load_inline(
        "demo",
        c_sources=r'''
            #include <stdint.h>
            int64_t add(int64_t a, int64_t b) { return a + b; }
            double scale(double x, int32_t k) { return x * k; }
        ''',
        functions=["add", "scale"],
    )
    assert mod.add(2, 3) == 5

Each name in `functions` is an exported (non-static) function of the
library. Its signature is read from its definition in the source: the C
types of tvmnode/function.h's signature grammar (int8_t ... uint64_t, int,
long, size_t, bool, float, double, void *, const char *, TnObject *, TnAny,
const TnAny *, DLTensor *, DLDataType, DLDevice) map to "i8" ... "u64",
"bool", "f32", "f64", "ptr", "str", "obj+" (a returned TnObject * is taken
as a new reference), "any", "any*", "dltensor", "dtype" and "device";
`signatures={"name": "obj(obj)"}` gives one explicitly instead. A function
with the packed form `int f(void *self, const TnAny *args, int32_t nargs,
TnAny *ret)` is called packed. Either way the functions are tn.Functions
made by the libffi bridge, so get_function_metadata reports their types.

The source is compiled against the tvmnode headers and linked to the very
libtvmnode this process runs on, so it may use the whole C API: register
global functions, make objects, raise errors. Builds are cached by a hash
of everything that goes into them, under `build_directory`, else
$TVMNODE_CACHE_DIR, else ~/.cache/tvmnode. A library, once loaded, stays
loaded for the life of the process (its functions may outlive the module).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _ffi
from ._metadata import function_metadata
from ._paths import _include_dir

__all__ = ["BuildError", "InlineModule", "build", "build_inline", "load", "load_inline"]


class BuildError(RuntimeError):
    """The compiler refused the source: `command` is what ran, `output`
    what the compiler said (also in the message)."""

    def __init__(self, message: str, command: Sequence[str], output: str) -> None:
        super().__init__(message)
        self.command = list(command)
        self.output = output


# ---------------------------------------------------------------------------
# Building

def _strs(value: Union[str, Sequence[str], None], who: str, arg: str) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, (list, tuple)):
        raise TypeError("%s: argument '%s' expected a str or a list of str, got %s"
                        % (who, arg, type(value).__name__))
    for v in value:
        if not isinstance(v, str):
            raise TypeError("%s: argument '%s' expected a str or a list of str, got a list "
                            "holding %s" % (who, arg, type(v).__name__))
    return list(value)


def _check_name(name: Any, who: str) -> str:
    if not isinstance(name, str):
        raise TypeError("%s: argument 'name' expected a str, got %s"
                        % (who, type(name).__name__))
    if not re.match(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\Z", name):
        raise ValueError("%s: name %r must be letters, digits, '_', '.' and '-' (it names "
                         "files)" % (who, name))
    return name


def _cache_root(build_directory: Optional[str], who: str) -> Path:
    if build_directory is not None:
        if not isinstance(build_directory, (str, os.PathLike)):
            raise TypeError("%s: argument 'build_directory' expected a str path, got %s"
                            % (who, type(build_directory).__name__))
        return Path(os.fspath(build_directory)).expanduser()
    env = os.environ.get("TVMNODE_CACHE_DIR")
    return Path(env).expanduser() if env else Path("~/.cache/tvmnode").expanduser()


def _library() -> str:
    return _ffi._library_path()


def _compile(who: str, out: Path, units: Sequence[Path], cpp: bool, cflags: Sequence[str],
             ldflags: Sequence[str], includes: Sequence[str]) -> None:
    """Compile and link `units` into the shared library `out` (written under
    a temporary name, then moved, so concurrent builds never see half a
    library)."""
    cc = (os.environ.get("CXX", "c++") if cpp else os.environ.get("CC", "cc"))
    lib = _library()
    cmd = [cc, "-shared", "-fPIC", "-O2", "-std=c++17" if cpp else "-std=c11",
           "-I" + str(_include_dir())]
    cmd += ["-I" + p for p in includes] + list(cflags)
    fd, tmp = tempfile.mkstemp(prefix=out.name + ".", suffix=".tmp", dir=str(out.parent))
    os.close(fd)
    cmd += [str(u) for u in units] + ["-o", tmp, lib,
                                      "-Wl,-rpath," + os.path.dirname(lib)] + list(ldflags)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        os.unlink(tmp)
        raise BuildError("%s: cannot run the compiler %r: %s" % (who, cc, e), cmd,
                         str(e)) from None
    if proc.returncode != 0:
        os.unlink(tmp)
        output = (proc.stderr + proc.stdout).strip()
        raise BuildError("%s: %s failed (exit %d):\n%s" % (who, cc, proc.returncode, output),
                         cmd, output)
    os.replace(tmp, out)


def _digest(parts: Any) -> str:
    lib = _library()
    st = os.stat(lib)
    key = json.dumps([parts, lib, st.st_size, st.st_mtime_ns, str(_include_dir())],
                     sort_keys=True)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def build_inline(name: str, *, c_sources: Union[str, Sequence[str], None] = None,
                 cpp_sources: Union[str, Sequence[str], None] = None,
                 functions: Union[str, Sequence[str], Mapping[str, str], None] = None,
                 extra_cflags: Optional[Sequence[str]] = None,
                 extra_ldflags: Optional[Sequence[str]] = None,
                 extra_include_paths: Optional[Sequence[str]] = None,
                 build_directory: Optional[str] = None) -> str:
    """Compile source given as strings into a shared library and return its
    path; a build with the same inputs is reused. Give `c_sources` (C11,
    $CC or cc) or `cpp_sources` (C++17, $CXX or c++), not both; several
    strings are joined into one file. `functions` is accepted for tvm-ffi's
    signature and does not change the build. BuildError carries the
    compiler's message."""
    return _build_inline("build_inline", name, c_sources, cpp_sources, extra_cflags,
                         extra_ldflags, extra_include_paths, build_directory)


def _build_inline(who: str, name: str, c_sources: Union[str, Sequence[str], None],
                  cpp_sources: Union[str, Sequence[str], None],
                  extra_cflags: Optional[Sequence[str]], extra_ldflags: Optional[Sequence[str]],
                  extra_include_paths: Optional[Sequence[str]],
                  build_directory: Optional[str]) -> str:
    _check_name(name, who)
    csrc = _strs(c_sources, who, "c_sources")
    cppsrc = _strs(cpp_sources, who, "cpp_sources")
    if bool(csrc) == bool(cppsrc):
        raise ValueError("%s: give c_sources or cpp_sources (one of them)" % who)
    cpp = bool(cppsrc)
    source = "\n".join(cppsrc if cpp else csrc)
    cflags = _strs(extra_cflags, who, "extra_cflags")
    ldflags = _strs(extra_ldflags, who, "extra_ldflags")
    includes = _strs(extra_include_paths, who, "extra_include_paths")
    compiler = os.environ.get("CXX", "c++") if cpp else os.environ.get("CC", "cc")
    digest = _digest([name, cpp, source, cflags, ldflags, includes, compiler])
    d = _cache_root(build_directory, who) / ("%s_%s" % (name, digest))
    out = d / ("%s.so" % name)
    if out.exists():
        return str(out)
    d.mkdir(parents=True, exist_ok=True)
    src = d / ("%s.%s" % (name, "cc" if cpp else "c"))
    # written whole under a temporary name, then moved: a build running at
    # the same time never compiles half a file
    fd, tmp = tempfile.mkstemp(prefix=src.name + ".", suffix=".tmp", dir=str(d))
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        # the C API comes included; compiler messages count the user's lines
        f.write('#include <stdbool.h>\n#include <stdint.h>\n#include <tvmnode/tvmnode.h>\n'
                '#line 1 "%s"\n%s\n' % (src.name, source))
    os.replace(tmp, src)
    _compile(who, out, [src], cpp, cflags, ldflags, includes)
    return str(out)


def build(name: str, *, sources: Union[str, Sequence[str], None] = None,
          extra_cflags: Optional[Sequence[str]] = None,
          extra_ldflags: Optional[Sequence[str]] = None,
          extra_include_paths: Optional[Sequence[str]] = None,
          build_directory: Optional[str] = None, output: Optional[str] = None) -> str:
    """Compile source files (.c with the C compiler; .cc, .cpp or .cxx
    with the C++ compiler and the C++ linker) into the shared library
    `output` (default: <build dir>/<name>_<hash>/<name>.so, cached by the
    files' contents) and return its path."""
    who = "build"
    _check_name(name, who)
    files = [Path(os.fspath(s)) for s in _strs(sources, who, "sources")]
    if not files:
        raise ValueError("%s: argument 'sources' names no file" % who)
    cpp = False
    for f in files:
        if f.suffix in (".cc", ".cpp", ".cxx"):
            cpp = True
        elif f.suffix != ".c":
            raise ValueError("%s: %s is neither C (.c) nor C++ (.cc, .cpp, .cxx)" % (who, f))
        if not f.is_file():
            raise FileNotFoundError("%s: no source file %s" % (who, f))
    if cpp and any(f.suffix == ".c" for f in files):
        raise ValueError("%s: C and C++ files in one build are not supported; give one "
                         "language" % who)
    cflags = _strs(extra_cflags, who, "extra_cflags")
    ldflags = _strs(extra_ldflags, who, "extra_ldflags")
    includes = _strs(extra_include_paths, who, "extra_include_paths")
    if output is not None:
        out = Path(os.fspath(output))
        out.parent.mkdir(parents=True, exist_ok=True)
    else:
        contents = [[str(f.resolve()), f.read_text(encoding="utf-8", errors="replace")]
                    for f in files]
        compiler = os.environ.get("CXX", "c++") if cpp else os.environ.get("CC", "cc")
        digest = _digest([name, cpp, contents, cflags, ldflags, includes, compiler])
        d = _cache_root(build_directory, who) / ("%s_%s" % (name, digest))
        out = d / ("%s.so" % name)
        if out.exists():
            return str(out)
        d.mkdir(parents=True, exist_ok=True)
    _compile(who, out, files, cpp, cflags, ldflags, includes)
    return str(out)


# ---------------------------------------------------------------------------
# Signatures from C definitions

_C_TYPES = {
    "void": "void", "bool": "bool", "_Bool": "bool",
    "int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
    "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64",
    "char": "i8", "signed char": "i8", "unsigned char": "u8",
    "short": "i16", "unsigned short": "u16",
    "int": "i32", "signed": "i32", "signed int": "i32", "unsigned": "u32",
    "unsigned int": "u32",
    "long": "i64", "long int": "i64", "long long": "i64", "unsigned long": "u64",
    "unsigned long long": "u64", "size_t": "u64", "ssize_t": "i64", "ptrdiff_t": "i64",
    "intptr_t": "i64", "uintptr_t": "u64",
    "float": "f32", "double": "f64",
    "void *": "ptr", "const void *": "ptr",
    "const char *": "str", "char *": "str",
    "TnObject *": "obj", "const TnObject *": "obj",
    "TnAny": "any", "const TnAny *": "any*",
    "DLTensor *": "dltensor", "const DLTensor *": "dltensor",
    "DLDataType": "dtype", "DLDevice": "device",
}

_QUALIFIERS = {"static", "inline", "extern", "__inline", "__inline__", "TN_API",
               "TVMGEN_API"}


def _norm_type(text: str) -> str:
    text = re.sub(r'extern\s*"C"', " ", text)
    text = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", text)
    toks = re.findall(r"[A-Za-z_]\w*|\*", text)
    return " ".join(t for t in toks if t not in _QUALIFIERS)


def _c_type(text: str) -> Optional[str]:
    t = _norm_type(text)
    if t in _C_TYPES:
        return _C_TYPES[t]
    # a parameter: drop its name
    toks = t.split(" ")
    if len(toks) > 1 and toks[-1] != "*":
        return _C_TYPES.get(" ".join(toks[:-1]))
    return None


def _strip_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    return re.sub(r"//[^\n]*", " ", src)


def _deduce(source: str, name: str, who: str) -> str:
    """The bridge signature of the definition of `name` in `source`, or
    "packed" for the packed form; ValueError naming the type it cannot
    read."""
    src = _strip_comments(source)
    pat = re.compile(r"(?:^|[;}\n])\s*([A-Za-z_][\w\s\*\"()]*?[\s\*])%s\s*\(([^()]*)\)\s*\{"
                     % re.escape(name))
    m = pat.search(src)
    if m is None:
        raise ValueError("%s: no definition of '%s' found in the source to read its "
                         "signature from; give it in signatures={'%s': 'i64(i64)'}"
                         % (who, name, name))
    ret_text, params_text = m.group(1), m.group(2).strip()
    params = [] if params_text in ("", "void") else [p.strip() for p in params_text.split(",")]
    norm = [_norm_type(p) for p in params]
    if (_norm_type(ret_text) == "int" and len(norm) == 4 and _c_type(params[0]) == "ptr"
            and _c_type(params[1]) == "any*" and _c_type(params[2]) in ("i32",)
            and re.match(r"TnAny \*( \w+)?\Z", norm[3])):
        return "packed"
    ret = _c_type(ret_text)
    if ret is None:
        raise ValueError("%s: '%s' returns %r, which is not a C type tvmnode can "
                         "call; give its signature in signatures={'%s': ...}"
                         % (who, name, _norm_type(ret_text), name))
    if ret == "obj":
        ret = "obj+"
    elif ret == "any*":
        raise ValueError("%s: '%s' returns const TnAny *, which cannot be a return "
                         "type" % (who, name))
    args = []
    for i, p in enumerate(params):
        a = _c_type(p)
        if a is None or a == "void":
            raise ValueError("%s: parameter %d of '%s' is %r, which is not a C type "
                             "tvmnode can pass; give its signature in signatures={'%s': ...}"
                             % (who, i, name, _norm_type(p), name))
        args.append(a)
    return "%s(%s)" % (ret, ",".join(args))


# ---------------------------------------------------------------------------
# Loading

class InlineModule:
    """The functions of a library built by load_inline (or opened by load):
    `mod.name(...)`, `mod["name"]`, `mod.get_function(name)`, with
    tvm-ffi's get_function_metadata and get_function_doc. `path` is the
    library file."""

    def __init__(self, path: str, funcs: Dict[str, Any], docs: Dict[str, str]) -> None:
        self.path = path
        self._funcs = funcs
        self._docs = docs

    @property
    def functions(self) -> List[str]:
        """The names of the functions, in the order given."""
        return list(self._funcs)

    def implements_function(self, name: str, query_imports: bool = False) -> bool:
        """Whether the module has a function `name`."""
        return name in self._funcs

    def get_function(self, name: str, query_imports: bool = False) -> Any:
        """The Function `name`; AttributeError naming the ones there."""
        f = self._funcs.get(name)
        if f is None:
            raise AttributeError("module %s has no function %r (it has %s)"
                                 % (os.path.basename(self.path), name,
                                    ", ".join(self._funcs) or "none"))
        return f

    def get_function_metadata(self, name: str,
                              query_imports: bool = False) -> Optional[Dict[str, Any]]:
        """{"type_schema": ..., "c_signature": ...} of a function, {} for a
        packed one, None when the module has no function `name`."""
        f = self._funcs.get(name)
        return None if f is None else function_metadata(f)

    def get_function_doc(self, name: str, query_imports: bool = False) -> Optional[str]:
        """The documentation given in load_inline's `functions` mapping;
        None when none (or an empty one) was given."""
        return self._docs.get(name) or None

    def __getattr__(self, name: str) -> Any:
        # private names (and ours, before __init__ ran) are not functions
        # here: mod["_name"] reaches a function whose name starts with "_"
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get_function(name)

    def __getitem__(self, name: str) -> Any:
        return self.get_function(name)

    def __contains__(self, name: object) -> bool:
        return name in self._funcs

    def __dir__(self) -> List[str]:
        return sorted(set(object.__dir__(self)) | set(self._funcs))

    def __repr__(self) -> str:
        return "<tvmnode.cpp.InlineModule %s: %s>" % (os.path.basename(self.path),
                                                    ", ".join(self._funcs))


def _function_names(functions: Union[str, Sequence[str], Mapping[str, str], None],
                    who: str) -> Dict[str, str]:
    if functions is None:
        return {}
    if isinstance(functions, str):
        return {functions: ""}
    if isinstance(functions, Mapping):
        out = {}
        for k, v in functions.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError("%s: argument 'functions' expected a mapping of names to "
                                "docstrings (str to str), got a %s -> %s item"
                                % (who, type(k).__name__, type(v).__name__))
            out[k] = v
        return out
    return {n: "" for n in _strs(functions, who, "functions")}


def _open(path: str, names: Dict[str, str], signatures: Mapping[str, str], source: str,
          who: str) -> InlineModule:
    for n in names:
        if not n.isidentifier() or not n.isascii():
            raise ValueError("%s: function name %r is not a C identifier" % (who, n))
    for n in signatures:
        if n not in names:
            raise ValueError("%s: signatures names '%s', which is not in functions" % (who, n))
    # deduce before loading: a bad definition is reported without side effects
    sigs = {n: signatures[n] if n in signatures else _deduce(source, n, who) for n in names}
    lib = ctypes.CDLL(path)  # never closed: Functions point into it
    funcs: Dict[str, Any] = {}
    for n, sig in sigs.items():
        try:
            addr = ctypes.cast(getattr(lib, n), ctypes.c_void_p).value or 0
        except AttributeError:
            raise AttributeError("%s: %s exports no function '%s' (a static function is not "
                                 "exported; in C++ declare it extern \"C\")"
                                 % (who, os.path.basename(path), n)) from None
        if sig == "packed":
            funcs[n] = _ffi._func_from_packed(addr, n)
        else:
            funcs[n] = _ffi._func_from_c(addr, sig, n)
    return InlineModule(path, funcs, names)


def _signatures(signatures: Optional[Mapping[str, str]], who: str) -> Dict[str, str]:
    if signatures is None:
        return {}
    if not isinstance(signatures, Mapping):
        raise TypeError("%s: argument 'signatures' expected a mapping of names to signatures, "
                        "got %s" % (who, type(signatures).__name__))
    for k, v in signatures.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError("%s: argument 'signatures' expected str -> str items, got %s -> %s"
                            % (who, type(k).__name__, type(v).__name__))
    return dict(signatures)


def load_inline(name: str, *, c_sources: Union[str, Sequence[str], None] = None,
                cpp_sources: Union[str, Sequence[str], None] = None,
                functions: Union[str, Sequence[str], Mapping[str, str], None] = None,
                signatures: Optional[Mapping[str, str]] = None,
                extra_cflags: Optional[Sequence[str]] = None,
                extra_ldflags: Optional[Sequence[str]] = None,
                extra_include_paths: Optional[Sequence[str]] = None,
                build_directory: Optional[str] = None) -> InlineModule:
    """Compile the source (see build_inline), load the library and return
    its `functions` (a name, a list of names, or a mapping of names to
    docstrings, as in tvm-ffi) as an InlineModule. Each function's
    signature is read from its definition unless `signatures` gives it (see
    the module docstring). BuildError when the compiler fails, ValueError
    when a signature cannot be read, AttributeError when a function is not
    exported."""
    who = "load_inline"
    names = _function_names(functions, who)
    sigs = _signatures(signatures, who)
    for n in names:
        if not n.isidentifier() or not n.isascii():
            raise ValueError("%s: function name %r is not a C identifier" % (who, n))
    path = _build_inline(who, name, c_sources, cpp_sources, extra_cflags, extra_ldflags,
                         extra_include_paths, build_directory)
    source = "\n".join(_strs(c_sources, who, "c_sources") + _strs(cpp_sources, who,
                                                                    "cpp_sources"))
    return _open(path, names, sigs, source, who)


def load(path: str, functions: Union[str, Sequence[str], Mapping[str, str], None] = None, *,
         signatures: Optional[Mapping[str, str]] = None) -> InlineModule:
    """Open a shared library (say, one made by build) and return its
    `functions`, with signatures given in `signatures` or read from the
    library's source when it sits beside it (the file build_inline wrote)."""
    who = "load"
    p = os.fspath(path)
    if not isinstance(p, str):
        raise TypeError("load: argument 'path' expected a str path, got %s"
                        % type(path).__name__)
    if not os.path.isfile(p):
        raise FileNotFoundError("load: no library %s" % p)
    names = _function_names(functions, who)
    sigs = _signatures(signatures, who)
    stem = os.path.splitext(p)[0]
    source = ""
    for ext in (".c", ".cc", ".cpp", ".cxx"):
        if os.path.isfile(stem + ext):
            with open(stem + ext, encoding="utf-8", errors="replace") as f:
                source = f.read()
            break
    return _open(p, names, sigs, source, who)
