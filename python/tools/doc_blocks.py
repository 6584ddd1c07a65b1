"""doc_blocks.py: every C, Python, Go and Rust block of the user-facing
Markdown files is a program that compiles and runs, so the docs cannot
drift from the code.

    python doc_blocks.py --build BUILD_DIR [--only FILE[:LINE]] [FILE.md ...]

Without files it reads DOCS below. Each fenced block in ```c, ```python,
```go or ```rust is run as one program:

* python: a script, run by this interpreter (the test venv, the package of
  BUILD_DIR on its path);
* c: a C11 file compiled against the source tree's headers and linked with
  BUILD_DIR's libtvmnode, then run;
* go: a `package main` file in a module that requires tvmnode.dev/go (this
  checkout's go/), built and run with go/tools.sh's environment;
* rust: a binary crate depending on rust-sys/tvmnode, run with cargo.

The programs run in BUILD_DIR/docs/work, which holds the files the docs
name: kws_ref_model.tflite (and kws.tflite), x.npy (a keyword-spotting
input), kws.so and out/ (the model compiled by `tvmnode compile`).

A block that is not a whole program says how it becomes one in an HTML
comment right before its fence:

    <!-- doc-test: main -->            the block is the body of main (C, Go:
                                       of `func run() error`, Rust: of
                                       `fn main() -> Result<..>`); Python
                                       blocks are scripts already
    <!-- doc-test: main from the last paragraph -->
                                       its last paragraph is main's body,
                                       the ones before it at file scope
    <!-- doc-test: main
    before:
        hidden lines put before the block (in main's body for `main`)
    after:
        hidden lines put after it
    top:
        hidden lines at file scope (helpers, includes)
    -->
    <!-- not run: fragment (why) -->   not run; reported as such. Rare.

A C block with no main of its own and no `main` option (declarations) is
compiled with an empty main.

Go imports are added for the packages the program uses (tn, tvmnode, fmt,
os, errors, math). Each block is reported on one line, and the last line is
    docs tests: N passed, M failed
(blocks not run count in neither; they are listed). Exit status 1 when
any failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "python/README.md", "rust-sys/README.md", "go/README.md",
        "firmware/m4/README.md", "firmware/wasm/README.md"] + \
    sorted("docs/" + p.name for p in (ROOT / "docs").glob("*.md"))
LANGS = {"c": "c", "python": "python", "py": "python", "go": "go", "rust": "rust"}
FENCE = re.compile(r"^(\s*)```\s*([A-Za-z0-9_+-]*)\s*$")
MARK = re.compile(r"<!--[ \t]*(doc-test|not run)[ \t]*:?[ \t]*(.*?)\s*-->\s*$", re.S)
MODELS = Path(os.environ.get("TVMNODE_MODELS", ROOT.parent / "shared" / "models"))


class Block:
    def __init__(self, path: str, line: int, lang: str, code: str, mark: Optional[str],
                 opts: str, sections: Dict[str, str]) -> None:
        self.path, self.line, self.lang, self.code = path, line, lang, code
        self.mark, self.opts, self.sections = mark, opts, sections

    @property
    def where(self) -> str:
        return "%s:%d" % (self.path, self.line)


def parse_mark(text: str) -> Tuple[str, str, Dict[str, str]]:
    """(kind, first-line options, sections) of a marker comment."""
    m = MARK.match(text.strip())
    assert m
    kind, rest = m.group(1), m.group(2)
    first, _, body = rest.partition("\n")
    sections: Dict[str, str] = {}
    cur = None
    for line in body.splitlines():
        s = re.match(r"^\s*(before|after|top):\s*$", line)
        if s:
            cur = s.group(1)
            sections[cur] = ""
        elif cur:
            sections[cur] += line + "\n"
    return kind, first.strip(), {k: textwrap.dedent(v) for k, v in sections.items()}


def blocks_of(rel: str) -> List[Block]:
    lines = (ROOT / rel).read_text(encoding="utf-8").splitlines()
    out: List[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if lang in LANGS:
            code = "\n".join(x[len(indent):] if x.startswith(indent) else x
                             for x in lines[i + 1:j]) + "\n"
            # a marker comment ends on the line before the fence
            mark: Optional[str] = None
            opts, sections = "", {}  # type: str, Dict[str, str]
            k = i - 1
            if k >= 0 and lines[k].rstrip().endswith("-->"):
                start = k
                while start >= 0 and "<!--" not in lines[start]:
                    start -= 1
                text = "\n".join(lines[start:k + 1])
                if start >= 0 and MARK.match(text.strip()):
                    mark, opts, sections = parse_mark(text)
            out.append(Block(rel, i + 1, LANGS[lang], code, mark, opts, sections))
        i = j + 1
    return out


# ---- what the programs run beside ------------------------------------------------

def fixtures(work: Path, build: Path, need_lib: bool) -> None:
    work.mkdir(parents=True, exist_ok=True)
    for name in ("kws_ref_model.tflite", "kws.tflite"):
        dst = work / name
        if not dst.exists() and (MODELS / "kws_ref_model.tflite").exists():
            shutil.copyfile(MODELS / "kws_ref_model.tflite", dst)
    sample = sorted((ROOT / "python" / "examples" / "deploy" / "samples").glob("*.npy"))
    if sample and not (work / "x.npy").exists():
        shutil.copyfile(sample[0], work / "x.npy")
    if need_lib and not (work / "kws.so").exists():
        subprocess.run([sys.executable, "-m", "tvmnode", "compile", "kws_ref_model.tflite",
                        "--name", "kws", "-o", "out", "--shared", "kws.so"], cwd=str(work),
                       check=True, stdout=subprocess.DEVNULL)


def run(cmd: List[str], cwd: Path, env: Optional[Dict[str, str]] = None,
        timeout: int = 600) -> Tuple[bool, str]:
    try:
        p = subprocess.run(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return False, "timed out after %ds: %s" % (timeout, e)
    return p.returncode == 0, p.stdout


def wrap(b: Block, head: str, main_open: str, main_close: str, tail: str = "") -> str:
    s = b.sections
    if b.opts.split()[:1] == ["main"]:
        code, top = b.code, ""
        if "from the last paragraph" in b.opts:
            top, _, code = code.rstrip().rpartition("\n\n")
            top, code = top + "\n\n", code + "\n"
        body = s.get("before", "") + code + s.get("after", "")
        return (head + s.get("top", "") + top + main_open +
                textwrap.indent(body, "    ") + main_close + tail)
    return head + s.get("top", "") + s.get("before", "") + b.code + s.get("after", "") + tail


def run_python(b: Block, work: Path, d: Path, build: Path) -> Tuple[bool, str]:
    src = d / "block.py"
    src.write_text(wrap(b, "", "", ""))
    return run([sys.executable, str(src)], work)


def run_c(b: Block, work: Path, d: Path, build: Path) -> Tuple[bool, str]:
    src = d / "block.c"
    text = wrap(b, "#include <tvmnode/tvmnode.h>\n", "int main(void) {\n",
                "    return 0;\n}\n")
    if not re.search(r"\bmain\s*\(", text):  # declarations only: they must compile
        text += "\nint main(void) { return 0; }\n"
    src.write_text(text)
    exe = d / "block"
    lib = build / "libtvmnode" / ".libs"
    cc = os.environ.get("CC", "cc")
    ok, out = run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                   "-I", str(ROOT / "libtvmnode" / "include"),
                   "-I", str(ROOT / "runtime" / "host" / "include"),
                   "-I", str(ROOT / "runtime" / "crt" / "include"), str(src), "-o", str(exe),
                   "-L", str(lib), "-Wl,-rpath," + str(lib), "-ltvmnode", "-lm"], d)
    if not ok:
        return ok, out
    return run([str(exe)], work)


GO_IMPORTS = [("tn.", 'tn "tvmnode.dev/go/tvmnode"'), ("tvmnode.", '"tvmnode.dev/go/tvmnode"'),
              ("fmt.", '"fmt"'), ("os.", '"os"'), ("errors.", '"errors"'), ("math.", '"math"')]


def run_go(b: Block, work: Path, d: Path, build: Path) -> Tuple[bool, str]:
    body = wrap(b, "", "func run() error {\n", "    return nil\n}\n")
    if "package main" not in body:
        used = [imp for pfx, imp in GO_IMPORTS
                if re.search(r"(?<![\w.])" + re.escape(pfx), body)]
        body = ("package main\n\nimport (\n%s)\n\n" % "".join("\t%s\n" % u for u in used) +
                body + ("\nfunc main() {\n\tif err := run(); err != nil {\n"
                        "\t\tpanic(err)\n\t}\n}\n" if "func main()" not in body else ""))
    (d / "main.go").write_text(body)
    (d / "go.mod").write_text("module doctest\n\ngo 1.19\n\nrequire tvmnode.dev/go v0.0.0\n\n"
                              "replace tvmnode.dev/go => %s\n" % (ROOT / "go"))
    script = ('. "%s" "%s" >/dev/null && cd "%s" && gofmt -l . && go build -o block . && '
              'cd "%s" && "%s/block"' % (ROOT / "go" / "tools.sh", build, d, work, d))
    return run(["bash", "-c", script], d)


def run_rust(b: Block, work: Path, d: Path, build: Path) -> Tuple[bool, str]:
    main = wrap(b, "", "fn main() -> Result<(), Box<dyn std::error::Error>> {\n",
                "    Ok(())\n}\n")
    (d / "src").mkdir(exist_ok=True)
    (d / "src" / "main.rs").write_text(main)
    (d / "Cargo.toml").write_text(
        '[package]\nname = "doctest"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        '[dependencies]\ntvmnode = { path = "%s" }\n\n[workspace]\n'
        % (ROOT / "rust-sys" / "tvmnode"))
    lock = ROOT / "rust-sys" / "Cargo.lock"
    if lock.exists():
        shutil.copyfile(lock, d / "Cargo.lock")
    lib = str(build / "libtvmnode" / ".libs")
    ld = os.environ.get("LD_LIBRARY_PATH")
    env = dict(os.environ, TVMNODE_BUILD_DIR=str(build),
               CARGO_TARGET_DIR=str(build / "docs" / "rust-target"),
               LD_LIBRARY_PATH=lib + (":" + ld if ld else ""))
    return run(["cargo", "run", "-q", "--manifest-path", str(d / "Cargo.toml")], work, env)


RUNNERS = {"python": run_python, "c": run_c, "go": run_go, "rust": run_rust}
TOOLS = {"c": os.environ.get("CC", "cc"), "go": None, "rust": "cargo", "python": None}


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--only", help="FILE or FILE:LINE: only these blocks")
    p.add_argument("files", nargs="*")
    args = p.parse_args(argv)
    build = Path(args.build).resolve()
    root = build / "docs"
    work = root / "work"
    blocks = [b for f in (args.files or DOCS) if (ROOT / f).exists() for b in blocks_of(f)]
    if args.only:
        blocks = [b for b in blocks if args.only in (b.path, b.where)]
    need_lib = any("kws.so" in b.code + "".join(b.sections.values()) for b in blocks
                   if b.mark != "not run")
    fixtures(work, build, need_lib)
    passed = failed = 0
    for n, b in enumerate(blocks):
        if b.mark == "not run":
            print("not run  %-28s %-6s %s" % (b.where, b.lang, b.opts))
            continue
        d = root / "blocks" / ("%s_%d" % (re.sub(r"\W", "_", b.path), b.line))
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        ok, out = RUNNERS[b.lang](b, work, d, build)
        print("%-8s %-28s %-6s" % ("ok" if ok else "FAILED", b.where, b.lang))
        if ok:
            passed += 1
        else:
            failed += 1
            print(textwrap.indent(out.rstrip()[-4000:], "    | "))
    print("docs tests: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
