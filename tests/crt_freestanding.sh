#!/bin/sh
# crt_freestanding.sh: prove that runtime/crt stays freestanding.
#
# 1. The crt objects as built for the host may leave undefined only the
#    symbols a freestanding C environment provides (memcpy, memset, memmove,
#    memcmp) and libm's float functions: no malloc/free/calloc/realloc, no
#    stdio, nothing of libtvmnode or GLib.
# 2. A link with -nostdlib and --no-undefined against stubs of exactly those
#    allowed symbols succeeds (so nothing else is needed at link time).
# 3. A bare firmware (tests/crt_firmware_link.c: a descriptor and a call of
#    every function of tvmnode/crt/model.h) links the same way into an
#    executable, and nm finds no malloc, free, calloc or realloc in it,
#    defined or undefined.
# 4. Where the cross compilers are installed, every crt source (the ISA
#    forms in src/kernels/<isa>/ included) compiles with -Werror, and
#    without a variable-length array (-Werror=vla: a kernel's buffers come
#    from the planned scratch, not from a stack sized at run time), for every
#    Cortex-M target of the target table, firmware/targets.txt, with its
#    flags (arm-none-eabi-gcc), and for wasm32 (clang); for each Cortex-M
#    target the firmware then links with all of them into an ELF with
#    -nostartfiles -nostdlib, libgcc and stubs of the allowed symbols, and
#    arm-none-eabi-nm finds no allocator in it either.
# 1 to 3 need the host build of the crt and are skipped when a sanitizer
# instruments it. Prints one line per check and
# "crt freestanding: N passed, M failed".
set -u
. "${srcdir:-.}/tests/script_util.sh"
lib="runtime/crt/.libs/libtvmnode_crt.a"

allowed='^(memcpy|memset|memmove|memcmp|(exp|log|sqrt|tanh|floor|ceil|round|fabs|pow|fmin|fmax|lrint|lround|frexp|ldexp)f?)$'
strict="-std=c11 -ffreestanding -Wall -Wextra -Werror -Werror=vla -I$top/runtime/crt/include -I$top/runtime/crt/src -I$top/runtime/crt/src/kernels"
firmware="$top/tests/crt_firmware_link.c"

# stubs OUT LIST...: a C file with a stub for each allowed symbol the lists
# of undefined symbols name; the links below fail on anything else.
stubs() {
  out="$1"; shift
  cat "$@" | grep -E "$allowed" | sort -u |
    awk '{ printf "void %s(void); void %s(void) {}\n", $1, $1 }' >"$out"
  echo "int tn_crt_link_check_anchor;" >>"$out"
}
# no_alloc NAME NM FILE: FILE (a linked firmware) has no allocator symbol,
# defined or undefined.
no_alloc() {
  if ! "$2" "$3" >"$tmp/syms" 2>"$tmp/err"; then
    bad "$1: $2 failed: $(head -5 "$tmp/err")"; return
  fi
  found=$(awk '{ print $NF }' "$tmp/syms" |
    grep -E '^(malloc|free|calloc|realloc)$' | sort -u | tr '\n' ' ')
  if [ -n "$found" ]; then
    bad "$1: the link has $found"
  else
    ok "$1: no malloc/free/calloc/realloc in the link"
  fi
}

if [ -f "$lib" ]; then
  # undefined in some object and defined in none (kernels call each other)
  nm --defined-only "$lib" 2>/dev/null | awk 'NF == 3 { print $3 }' |
    sort -u >"$tmp/defined"
  nm -u "$lib" 2>/dev/null | awk '$1 == "U" { print $2 }' | sort -u |
    comm -23 - "$tmp/defined" |
    # the linker's own symbol, named by the host's PIC objects that read a
    # global of another object (the session's message descriptors)
    grep -vx _GLOBAL_OFFSET_TABLE_ >"$tmp/undef"
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
  # The firmware, compiled as the crt is (a host compiler may protect the
  # stack by default, which needs the C library).
  : >"$tmp/fw.undef"
  fw_built=no
  if "$CC" $strict -fno-stack-protector -c "$firmware" -o "$tmp/fw.o" \
       2>"$tmp/err"; then
    fw_built=yes
    nm -u "$tmp/fw.o" | awk '$1 == "U" { print $2 }' >"$tmp/fw.undef"
  else
    bad "firmware (host): $firmware: $(head -5 "$tmp/err")"
  fi
  # Stubs for the allowed symbols the crt and the firmware really use, then
  # links that fail on anything else.
  stubs "$tmp/stubs.c" "$tmp/undef" "$tmp/fw.undef"
  if "$CC" -fno-builtin -c "$tmp/stubs.c" -o "$tmp/stubs.o" 2>"$tmp/err" &&
     "$CC" -nostdlib -shared -Wl,--no-undefined -Wl,--whole-archive "$lib" \
       -Wl,--no-whole-archive "$tmp/stubs.o" -o "$tmp/crt.so" 2>>"$tmp/err"; then
    ok "crt links with -nostdlib -Wl,--no-undefined"
  else
    bad "crt link with -nostdlib failed: $(head -5 "$tmp/err")"
  fi
  if [ "$fw_built" = yes ]; then
    if "$CC" -nostdlib -static -Wl,--no-undefined -Wl,-e,_start \
         "$tmp/fw.o" "$lib" "$tmp/stubs.o" -o "$tmp/fw" 2>"$tmp/err"; then
      ok "firmware (host) links with -nostdlib -static -Wl,--no-undefined"
      no_alloc "firmware (host)" nm "$tmp/fw"
    else
      bad "firmware (host) link failed: $(head -5 "$tmp/err")"
    fi
  fi
fi

srcs=$(find "$top"/runtime/crt/src -name "*.c" | sort)
# cross NAME COMPILER ARGS...: true when every source compiled; the objects
# are left in $tmp/objs.
cross() {
  name="$1"; shift
  rm -rf "$tmp/objs" && mkdir "$tmp/objs"
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "skip: $name ($1 not installed)"; return 1
  fi
  n=0
  for s in $srcs; do
    n=$((n + 1))
    if ! "$@" $strict -c "$s" -o "$tmp/objs/$n.o" 2>"$tmp/err"; then
      bad "$name: $s: $(head -5 "$tmp/err")"; return 1
    fi
  done
  ok "$name: every crt source compiles with -Werror"
}
cross "host -ffreestanding" "$CC"
# The sources whose Cortex-M forms carry inline assembly (arm_dsp/,
# arm_mve/): how many registers gcc frees for an asm block depends on the
# level, so one that fits at -O2 may not at -O3 or -Og.
asm_srcs="$top/runtime/crt/src/kernels/conv_s8.c $top/runtime/crt/src/kernels/dense_s8.c
  $top/runtime/crt/src/kernels/quant.c"
# asm_levels NAME ARGS...: those sources at every other level, with the
# frame pointer kept.
asm_levels() {
  name="$1"; shift
  for lvl in -O0 -O1 -Og -Os -O3; do
    for s in $asm_srcs; do
      if ! arm-none-eabi-gcc "$@" $lvl -fno-omit-frame-pointer $strict -c "$s" \
             -o "$tmp/asm.o" 2>"$tmp/err"; then
        bad "$name $lvl -fno-omit-frame-pointer: $s: $(head -5 "$tmp/err")"; return 1
      fi
    done
  done
  ok "$name: the inline-assembly kernels compile at -O0 -O1 -Og -Os -O3 with the frame pointer kept"
}
# One Cortex-M target a row: name machine cpu ipt ld flags...
grep -v '^[[:space:]]*#' "$top/firmware/targets.txt" | grep -v '^[[:space:]]*$' >"$tmp/targets"
while read -r tname _machine _cpu _ipt _ld tflags; do
  # with the frame pointer kept (cc-rs's default: the Embedded Rust build),
  # which takes a register from the DSP forms' inline assembly
  if cross "$tname -O2 -fno-omit-frame-pointer" arm-none-eabi-gcc $tflags \
       -O2 -fno-omit-frame-pointer; then
    asm_levels "$tname" $tflags || true
  fi
  if ! cross "$tname" arm-none-eabi-gcc $tflags; then continue; fi
  # The firmware with every crt object: what is still undefined must be an
  # allowed symbol (stubbed here; a real firmware links newlib's or its own)
  # or libgcc's (soft double arithmetic, division helpers).
  if ! arm-none-eabi-gcc $tflags $strict -c "$firmware" -o "$tmp/fw-t.o" \
         2>"$tmp/err"; then
    bad "firmware ($tname): $firmware: $(head -5 "$tmp/err")"
    continue
  fi
  arm-none-eabi-nm -u "$tmp/fw-t.o" "$tmp"/objs/*.o |
    awk '$1 == "U" { print $2 }' >"$tmp/t.undef"
  stubs "$tmp/t-stubs.c" "$tmp/t.undef"
  if arm-none-eabi-gcc $tflags -ffreestanding -fno-builtin -c \
       "$tmp/t-stubs.c" -o "$tmp/t-stubs.o" 2>"$tmp/err" &&
     arm-none-eabi-gcc $tflags -nostartfiles -nostdlib -Wl,--no-undefined \
       "$tmp/fw-t.o" "$tmp"/objs/*.o "$tmp/t-stubs.o" -lgcc \
       -o "$tmp/fw-t.elf" 2>>"$tmp/err"; then
    ok "firmware ($tname) links with -nostartfiles -nostdlib -lgcc"
    no_alloc "firmware ($tname)" arm-none-eabi-nm "$tmp/fw-t.elf"
  else
    bad "firmware ($tname) link failed: $(head -5 "$tmp/err")"
  fi
done <"$tmp/targets"
cross "wasm32" clang --target=wasm32 -nostdlib

summary "crt freestanding"
