#!/usr/bin/env bash
# tools/packaging_changed.sh: exit 0 when a commit of the last day before
# HEAD (by committer date, so that a later run on the same commit answers
# the same) changed how the wheel is made or tested on each CPython: the
# build and package metadata, the file list, the per-version script, or
# how the package finds its library and the crt. Prints those files.
# .ci/run then runs the whole suite on every Python (TNPY_FULL_MATRIX=1);
# otherwise the interpreter-independent sweeps run once, in the main stage.
# Exit 1 when nothing changed; 2 outside a git checkout (then the caller
# should take the full matrix).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2
head=$(git log -1 --format=%ct HEAD 2>/dev/null) || exit 2
changed=$(git log --since=@$((head - 86400)) --name-only --format= HEAD -- \
  python/setup.py python/pyproject.toml python/MANIFEST.in python/tools/test_versions.sh \
  python/tvmnode/_paths.py \
  | sort -u)
[ -n "$changed" ] || exit 1
echo "$changed"
exit 0
