#!/bin/sh
# host_registers.sh: runtime/host registers its global functions itself
# (runtime/host/init.c), in every kind of link.
#
# tests/host_registry.c uses nothing of the host runtime but its registered
# names. It is linked
# 1. against the static archive, with the link line `pkg-config --static`
#    gives for tvmnode.pc (of this build tree, its archive in place of
#    -ltvmnode): the -Wl,-u,tn__host_init there is what keeps the host's
#    objects, which nothing references, in the link;
# 2. against the shared library;
# and each program must find every function. A part is skipped when the
# build has no such library, or when a sanitizer instruments the library
# (the program would need its runtime; test_module covers the shared case
# there). Prints "host registers: N passed, M failed".
set -u
. "${srcdir:-.}/tests/script_util.sh"

libs="$(pwd)/libtvmnode/.libs"
cflags="-I$top/libtvmnode/include -I$top/runtime/host/include"
prog="$top/tests/host_registry.c"

# run NAME EXE: the program finds every function.
run() {
  if LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$2" \
       >"$tmp/out" 2>&1; then
    ok "$1: $(tail -1 "$tmp/out")"
  else
    bad "$1: $(head -20 "$tmp/out" | tr '\n' ' ')"
  fi
}

# the library itself says whether a sanitizer instrumented it: its
# undefined symbols then include the sanitizer's runtime
instrumented=no
for lib in "$libs/libtvmnode.so" "$libs/libtvmnode.a"; do
  [ -f "$lib" ] || continue
  if nm -u "$lib" 2>/dev/null |
       grep -qE ' __(tsan|asan|ubsan|msan|sanitizer)_'; then
    instrumented=yes
  fi
  break
done

if [ "$instrumented" = yes ]; then
  echo "skip: the library is instrumented by a sanitizer in this build"
else
  if [ ! -f "$libs/libtvmnode.a" ]; then
    echo "skip: static link (no libtvmnode.a: configured --disable-static)"
  elif ! command -v pkg-config >/dev/null 2>&1; then
    echo "skip: static link (no pkg-config)"
  elif ! link=$(PKG_CONFIG_PATH=".${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
            pkg-config --static --libs tvmnode 2>"$tmp/err"); then
    bad "pkg-config --static --libs tvmnode: $(head -5 "$tmp/err")"
  else
    case " $link " in
      *" -Wl,-u,tn__host_init "*) ;;
      *) bad "tvmnode.pc: the static link line lacks -Wl,-u,tn__host_init" ;;
    esac
    # The archive of this tree, wherever tvmnode.pc says it is installed.
    link=$(printf '%s\n' "$link" | sed -e "s|-L[^ ]*||" \
             -e "s|-ltvmnode|$libs/libtvmnode.a|")
    # shellcheck disable=SC2086
    if "$CC" $cflags "$prog" -o "$tmp/static" $link 2>"$tmp/err"; then
      if nm "$tmp/static" | grep -qE ' [TtDd] tn_module_system$'; then
        run "static link ($link)" "$tmp/static"
      else
        bad "static link: the program has no tn_module_system: the host runtime was left out"
      fi
    else
      bad "static link failed: $(head -5 "$tmp/err")"
    fi
  fi
  if [ ! -f "$libs/libtvmnode.so" ]; then
    echo "skip: shared link (no libtvmnode.so: configured --disable-shared)"
  elif "$CC" $cflags "$prog" -o "$tmp/shared" -L"$libs" -ltvmnode \
         2>"$tmp/err"; then
    run "shared link" "$tmp/shared"
  else
    bad "shared link failed: $(head -5 "$tmp/err")"
  fi
fi

summary "host registers"
