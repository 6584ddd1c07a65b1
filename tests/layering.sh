#!/bin/sh
# layering.sh: prove that every arrow of DESIGN.md's "Layers" points down.
#
# Inside libtvmnode the layers are, from the bottom: core, func, reflect,
# ir, kernel, pass, codegen (the order init.c starts them in, checked
# here too). A layer may use its own layer and the layers below it, never
# one above; runtime/host sits on libtvmnode's public API and registers
# itself, so nothing in libtvmnode reaches into it; runtime/crt depends on
# nothing of ours.
#
# 1. Includes, in the sources:
#    - libtvmnode/src/<layer>/ includes the internal headers ("<layer>/...")
#      of its own and lower layers only, the crt's headers from the kernel
#      layer up only, and no header of runtime/host;
#    - runtime/host includes public headers only: libtvmnode's
#      (libtvmnode/include/tvmnode), its own and the crt's;
#    - runtime/crt includes nothing outside runtime/crt.
# 2. Symbols, in the objects of the build tree (nm):
#    - an object of a layer refers to no symbol defined in a higher layer
#      (the one exception: core/object.c keeps init.c's constructor in
#      static links by a reference to tn__library_init);
#    - no object of libtvmnode refers to a symbol of runtime/host;
#    - runtime/host refers to no hidden (internal) symbol of libtvmnode;
#    - runtime/crt refers to no symbol of libtvmnode or runtime/host, and
#      libtvmnode reaches the crt from the kernel layer up only.
# Each broken rule is printed with the file (and line, or symbol), what
# breaks it and the rule. Prints "layering: N passed, M failed".
set -u
. "${srcdir:-.}/tests/script_util.sh"

# The layer order; init.c (the library's start-up) sits above them all.
layers="core func reflect ir kernel pass codegen"
rank() { # rank NAME: the position of a layer (init: above all), or -1
  r=0
  for l in $layers; do
    [ "$l" = "$1" ] && { echo "$r"; return; }
    r=$((r + 1))
  done
  [ "$1" = init ] && { echo 100; return; }
  echo -1
}
kernel_rank=$(rank kernel)

# ---- 0. init.c starts the layers in this order --------------------------------
order=$(grep -oE 'tn__[a-z]+_init\(\)' "$top/libtvmnode/src/init.c" |
  sed -E 's/tn__([a-z]+)_init\(\)/\1/' | tr '\n' ' ' | sed 's/ $//')
want=""
for l in $layers; do
  case " $order " in *" $l "*) want="${want:+$want }$l" ;; esac
done
if [ "$order" = "$want" ]; then
  ok "init.c starts the layers in layer order ($order)"
else
  bad "libtvmnode/src/init.c: starts the layers as '$order'; the rule: layer order ($layers), and no start-up of anything else"
fi

# ---- 1. includes ----------------------------------------------------------------
# includes FILE: "LINE<TAB>HEADER" for each #include of FILE.
includes() {
  grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' "$1" |
    sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]*)[>"].*/\1	\2/'
}
: >"$tmp/inc.bad"
bad_include() { # FILE LINE HEADER RULE
  printf '%s:%s: includes "%s": %s\n' "$1" "$2" "$3" "$4" >>"$tmp/inc.bad"
}
host_headers=$(ls "$top/runtime/host/include/tvmnode" 2>/dev/null | tr '\n' ' ')

nfiles=0
for f in "$top"/libtvmnode/src/*.c "$top"/libtvmnode/src/*/*.c \
         "$top"/libtvmnode/src/*/*.h; do
  [ -f "$f" ] || continue
  nfiles=$((nfiles + 1))
  rel=${f#"$top"/}
  dir=${rel#libtvmnode/src/}
  case "$dir" in */*) layer=${dir%%/*} ;; *) layer=init ;; esac
  lr=$(rank "$layer")
  includes "$f" >"$tmp/incs"
  while IFS='	' read -r line h; do
    case "$h" in
      tvmnode/crt/*)
        [ "$lr" -ge "$kernel_rank" ] ||
          bad_include "$rel" "$line" "$h" "layer $layer may not use the crt (libtvmnode reaches it through the lowering table: the kernel layer and up)"
        ;;
      tvmnode/*)
        case " $host_headers " in
          *" ${h#tvmnode/} "*)
            bad_include "$rel" "$line" "$h" "nothing in libtvmnode uses runtime/host (it registers itself)" ;;
        esac
        ;;
      */*)
        hl=${h%%/*}
        hr=$(rank "$hl")
        if [ "$hr" -lt 0 ]; then
          # A system header ("yajl/yajl_parse.h"), unless it is a file here.
          case "$h" in ../*) up=yes ;; *) up=no ;; esac
          if [ "$up" = yes ] || [ -f "$top/libtvmnode/src/$h" ] ||
             [ -f "$(dirname "$f")/$h" ]; then
            bad_include "$rel" "$line" "$h" "libtvmnode/src includes its layers' headers, public headers and system headers only"
          fi
        elif [ "$hr" -gt "$lr" ]; then
          bad_include "$rel" "$line" "$h" "layer $layer may include only its own and lower layers' headers ($layers)"
        fi
        ;;
    esac
  done <"$tmp/incs"
done

for f in "$top"/runtime/host/*.c "$top"/runtime/host/*.h \
         "$top"/runtime/host/include/tvmnode/*.h; do
  [ -f "$f" ] || continue
  nfiles=$((nfiles + 1))
  rel=${f#"$top"/}
  includes "$f" >"$tmp/incs"
  while IFS='	' read -r line h; do
    case "$h" in
      tvmnode/crt/*)
        [ -f "$top/runtime/crt/include/$h" ] ||
          bad_include "$rel" "$line" "$h" "runtime/host includes public headers only (no such crt header)" ;;
      tvmnode/*)
        [ -f "$top/libtvmnode/include/$h" ] ||
          [ -f "$top/runtime/host/include/$h" ] ||
          bad_include "$rel" "$line" "$h" "runtime/host includes public headers only (libtvmnode/include, its own, the crt's)" ;;
      */*)
        bad_include "$rel" "$line" "$h" "runtime/host includes public headers only (libtvmnode/include, its own, the crt's)" ;;
      *) ;; # a bare name: a system header or runtime/host's own
    esac
  done <"$tmp/incs"
done

crt_real=$(realpath "$top/runtime/crt")
for f in $(find "$top/runtime/crt" -name '*.[ch]' | sort); do
  nfiles=$((nfiles + 1))
  rel=${f#"$top"/}
  d=$(dirname "$f")
  includes "$f" >"$tmp/incs"
  while IFS='	' read -r line h; do
    case "$h" in
      tvmnode/*)
        [ -f "$top/runtime/crt/include/$h" ] ||
          bad_include "$rel" "$line" "$h" "runtime/crt includes nothing outside runtime/crt" ;;
      *)
        # Ours when it names a file of the tree; then it must be the crt's.
        for c in "$d/$h" "$top/runtime/crt/src/$h" "$top/runtime/crt/include/$h" \
                 "$top/libtvmnode/src/$h" "$top/libtvmnode/include/$h" \
                 "$top/runtime/host/$h" "$top/runtime/host/include/$h"; do
          [ -f "$c" ] || continue
          case "$(realpath "$c")" in
            "$crt_real"/*) ;;
            *) bad_include "$rel" "$line" "$h" "runtime/crt includes nothing outside runtime/crt" ;;
          esac
          break
        done
        ;;
    esac
  done <"$tmp/incs"
done

if [ -s "$tmp/inc.bad" ]; then
  sed 's/^/FAIL: /' "$tmp/inc.bad"
  fail=$((fail + $(wc -l <"$tmp/inc.bad")))
else
  ok "the includes of $nfiles files follow the layers"
fi

# ---- 2. symbols -------------------------------------------------------------------
# objects: "LAYER<TAB>OBJECT<TAB>SOURCE" for every object of the build tree
# (the PIC one where there is one), from the libtool .lo files.
objects() {
  find libtvmnode/src runtime/host runtime/crt -name '*.lo' 2>/dev/null | sort |
  while read -r lo; do
    d=$(dirname "$lo")
    o=$(sed -n "s/^pic_object='\(.*\)'$/\1/p" "$lo")
    [ -n "$o" ] && [ "$o" != none ] ||
      o=$(sed -n "s/^non_pic_object='\(.*\)'$/\1/p" "$lo")
    [ -f "$d/$o" ] || continue
    base=$(basename "$lo" .lo)
    src="$d/${base#*_la-}.c"
    case "$d" in
      runtime/host*) layer=host ;;
      runtime/crt*) layer=crt ;;
      libtvmnode/src) layer=init ;;
      libtvmnode/src/*) layer=${d#libtvmnode/src/}; layer=${layer%%/*} ;;
    esac
    printf '%s\t%s\t%s\n' "$layer" "$d/$o" "$src"
  done
}
objects >"$tmp/objs"
if [ ! -s "$tmp/objs" ]; then
  bad "no objects of libtvmnode in $(pwd) (build the tree first)"
else
  # Every global definition: "SYMBOL<TAB>LAYER<TAB>SOURCE<TAB>HIDDEN".
  while IFS='	' read -r layer o src; do
    objdump -t "$o" | awk -v l="$layer" -v s="$src" '
      $2 == "g" && $0 !~ /\*UND\*/ {
        hidden = ($(NF - 1) == ".hidden") ? 1 : 0
        printf "%s\t%s\t%s\t%d\n", $NF, l, s, hidden
      }'
  done <"$tmp/objs" | sort -t '	' -k1,1 >"$tmp/defs"
  # Every reference: "SYMBOL<TAB>LAYER<TAB>SOURCE".
  while IFS='	' read -r layer o src; do
    nm -u "$o" | awk -v l="$layer" -v s="$src" '
      $1 == "U" { printf "%s\t%s\t%s\n", $2, l, s }'
  done <"$tmp/objs" | sort -t '	' -k1,1 >"$tmp/refs"
  join -t '	' "$tmp/refs" "$tmp/defs" | awk -F '\t' -v order="$layers" '
    BEGIN {
      n = split(order, ls, " ")
      for (i = 1; i <= n; i++) rank[ls[i]] = i
      rank["init"] = 100
    }
    # $1 symbol, $2 user layer, $3 user source, $4 owner layer,
    # $5 owner source, $6 hidden in the owner
    {
      u = $2; o = $4; why = ""
      if (u == o) next
      if (u == "crt")
        why = "runtime/crt depends on nothing of ours"
      else if (o == "host" && u != "host")
        why = "nothing in libtvmnode calls into runtime/host (it registers itself)"
      else if (u == "host" && $6 == 1)
        why = "runtime/host uses libtvmnode'"'"'s public API only (this symbol is internal)"
      else if (u == "host" || o == "crt" && rank[u] >= rank["kernel"])
        next
      else if (o == "crt")
        why = "layer " u " may not use the crt (libtvmnode reaches it through the lowering table: the kernel layer and up)"
      else if (u == "core" && $1 == "tn__library_init")
        next # core/object.c keeps init.o (the constructor) in static links
      else if (rank[o] > rank[u])
        why = "layer " u " may use only its own and lower layers (" order ")"
      if (why != "")
        printf "%s: refers to %s, defined in %s (%s): %s\n", $3, $1, $5, o, why
    }' | sort -u >"$tmp/sym.bad"
  if [ -s "$tmp/sym.bad" ]; then
    sed 's/^/FAIL: /' "$tmp/sym.bad"
    fail=$((fail + $(wc -l <"$tmp/sym.bad")))
  else
    ok "the symbols of $(wc -l <"$tmp/objs") objects follow the layers"
  fi
fi

summary layering
