# script_util.sh: what the shell checks of `make check` (crt_freestanding.sh,
# host_registers.sh, layering.sh) share; sourced, not run. Gives $top (the
# source tree), $CC, $tmp (a directory removed on exit), ok/bad (one line
# each, counted) and summary NAME, which prints "NAME: N passed, M failed"
# and is the script's exit status.
srcdir="${srcdir:-.}"
top="$srcdir"
CC="${CC:-cc}"
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
summary() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
