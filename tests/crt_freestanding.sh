#!/bin/sh
# crt_freestanding.sh: prove that runtime/crt stays freestanding.
#
# 1. The crt objects as built for the host may leave undefined only the
#    symbols a freestanding C environment provides (memcpy, memset, memmove,
#    memcmp) and libm's float functions: no malloc/free/calloc/realloc, no
#    stdio, nothing of libtvmnode or GLib.
# 2. A link with -nostdlib and --no-undefined against stubs of exactly those
#    allowed symbols succeeds (so nothing else is needed at link time).
# 3. Where the cross compilers are installed, every crt source compiles with
#    -Werror for Cortex-M4 (arm-none-eabi-gcc) and wasm32 (clang).
# Prints one line per check and "crt freestanding: N passed, M failed".
set -u
srcdir="${srcdir:-.}"
top="$srcdir"
lib="runtime/crt/.libs/libtvmnode_crt.a"
CC="${CC:-cc}"
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

allowed='^(memcpy|memset|memmove|memcmp|(exp|log|sqrt|tanh|floor|ceil|round|fabs|pow|fmin|fmax|lrint|lround|frexp|ldexp)f?)$'

if [ -f "$lib" ]; then
  # undefined in some object and defined in none (kernels call each other)
  nm --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' |
    sort -u >"$tmp/defined"
  nm -u "$lib" 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u |
    comm -23 - "$tmp/defined" >"$tmp/undef"
fi
if [ ! -f "$lib" ]; then
  bad "no $lib (build the tree first)"
elif grep -qE '^__(tsan|asan|ubsan|msan|sanitizer)_' "$tmp/undef"; then
  # CFLAGS=-fsanitize=... reaches every object, the crt's too; the plain
  # build (./dev test) is where the crt's own symbols are checked.
  echo "skip: crt objects are instrumented by a sanitizer in this build"
else
  forbidden=$(grep -Ev "$allowed" "$tmp/undef" | tr '\n' ' ')
  if [ -n "$forbidden" ]; then
    bad "crt needs symbols a freestanding target lacks: $forbidden"
  else
    ok "crt objects need only: $(tr '\n' ' ' <"$tmp/undef")"
  fi
  for s in malloc free calloc realloc printf fprintf puts fwrite abort; do
    if grep -qx "$s" "$tmp/undef"; then bad "crt references $s"; fi
  done
  # Stubs for the allowed symbols the crt really uses, then a link that
  # fails on anything else.
  : >"$tmp/stubs.c"
  for s in $(grep -E "$allowed" "$tmp/undef"); do
    echo "void $s(void); void $s(void) {}" >>"$tmp/stubs.c"
  done
  echo "int tn_crt_link_check_anchor;" >>"$tmp/stubs.c"
  if "$CC" -fno-builtin -c "$tmp/stubs.c" -o "$tmp/stubs.o" 2>"$tmp/err" &&
     "$CC" -nostdlib -shared -Wl,--no-undefined -Wl,--whole-archive "$lib" \
       -Wl,--no-whole-archive "$tmp/stubs.o" -o "$tmp/crt.so" 2>>"$tmp/err"; then
    ok "crt links with -nostdlib -Wl,--no-undefined"
  else
    bad "crt link with -nostdlib failed: $(head -5 "$tmp/err")"
  fi
fi

strict="-std=c11 -ffreestanding -Wall -Wextra -Werror -I$top/runtime/crt/include"
srcs=$(find "$top"/runtime/crt/src -name "*.c" | sort)
cross() { # cross NAME COMPILER ARGS...
  name="$1"; shift
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "skip: $name ($1 not installed)"; return
  fi
  for s in $srcs; do
    if ! "$@" $strict -c "$s" -o "$tmp/x.o" 2>"$tmp/err"; then
      bad "$name: $s: $(head -5 "$tmp/err")"; return
    fi
  done
  ok "$name: every crt source compiles with -Werror"
}
cross "host -ffreestanding" "$CC"
cross "cortex-m4" arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb \
  -mfloat-abi=hard -mfpu=fpv4-sp-d16
cross "wasm32" clang --target=wasm32 -nostdlib

echo "crt freestanding: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
