#!/usr/bin/env bash
# tools/test_versions.sh [WORK_DIR [PYTEST_ARGS...]]: the Python binding on
# every CPython from 3.10 to 3.13 that pyenv has here (the newest patch
# release of each minor; `pyenv versions --bare`, else ~/.pyenv/versions/*).
# TNPY_FULL_MATRIX=1 runs the whole suite across them (see SWEEPS below).
# For each: a fresh virtual environment, the self-contained wheel built
# from this checkout with that interpreter (`pip wheel ./python`, no
# TVMNODE_BUILD_DIR), the wheel installed, the test packages from PyPI
# (through pip's cache), and the pytest suite (less SAME_ON_EVERY_PYTHON,
# which the main stage runs) on two workers against the
# installed package from outside the checkout with no build tree on any
# path. Prints per version
#   python 3.X: N passed, M failed, S skipped
# and last "python 3.10,...: N passed, M failed", the sum (only that line
# ends in "failed", so a CI that adds such lines up counts once). The exit
# status is non-zero when anything failed or no interpreter was found.
# WORK_DIR (default build-pyversions/ at the top of the checkout) keeps the
# venvs, wheels, logs and setuptools' build folders; the library build in
# it is reused by the next run. PYTEST_ARGS go to each pytest run, which
# runs in WORK_DIR/3.X (so paths in them are absolute).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=$(dirname "$HERE")
WORK=${1:-$ROOT/build-pyversions}
shift $(($# > 0 ? 1 : 0))
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
# onnxruntime is left out: the ONNX suites compare with it bit for bit, and
# the only wheel for CPython 3.10 is an older onnxruntime whose kernels round
# differently; the main stage runs them against the current one (they skip
# here).
PACKAGES="pytest pytest-xdist numpy tflite tflite-micro ai-edge-litert onnx"
# Left to the main Python stage (python/run_tests.sh), which runs them once:
# suites that test generated C (on the host, the emulated boards, wasm32,
# and the Embedded Rust interface), firmware or the source build, whose
# outcome does not depend on the interpreter (each compiles C or Rust, or
# runs qemu or node, for minutes; test_patch_stages.py and
# test_device_scratch.py compile every bundled model's C and build it).
SAME_ON_EVERY_PYTHON=(test_op_codegen.py test_op_device.py test_firmware_device.py
                      test_install_configured.py test_wasm.py test_rust_iface.py
                      test_cmake.py test_linker_sections.py test_params_blob.py
                      test_patch_stages.py test_device_scratch.py)
# Also left to the main stage, unless TNPY_FULL_MATRIX=1: the importers'
# operator sweeps and the code generator's suite. They are pure Python over
# numpy and the system C compiler (what they find does not depend on the
# interpreter), and they are two thirds of the suite's time. On every
# Python they are still collected, so each of their modules and every
# importer module they load is imported there; the two base importer
# suites (test_frontend_tflite.py, test_frontend_onnx.py) run in full.
# With TNPY_FULL_MATRIX=1 each of them runs on one interpreter, the
# versions taking them in turn (the first on 3.10, the second on 3.11, ...),
# so that between them the versions run the whole suite on the wheel (what
# the packaging could break: a file the wheel lacks fails there as on any
# Python) in about a quarter of the time of running it on each.
# .ci/run sets TNPY_FULL_MATRIX=1 when the packaging changed
# (tools/packaging_changed.sh).
SWEEPS=(test_frontend_onnx_ops.py test_frontend_onnx_qdq.py test_frontend_onnx_qdq_clip.py
        test_frontend_onnx_qop.py test_frontend_onnx_rnn.py test_frontend_tflite_16x8.py
        test_frontend_tflite_control.py test_frontend_tflite_elementwise.py
        test_frontend_tflite_hybrid.py test_frontend_tflite_int16.py
        test_frontend_tflite_int16_act.py test_frontend_tflite_logic.py
        test_frontend_tflite_lstm.py test_frontend_tflite_lstm16.py
        test_frontend_tflite_movement.py test_frontend_tflite_ops.py
        test_frontend_tflite_space.py test_frontend_tflite_sparse.py
        test_frontend_tflite_spatial.py test_frontend_tflite_svdf.py
        test_frontend_tflite_uint8.py test_codegen.py test_onnx_cli.py test_check_cli.py
        test_deploy.py)
FULL=${TNPY_FULL_MATRIX:-0}
pip_q() { "$@" -q --disable-pip-version-check; }

# the interpreters: newest patch release per minor, 3.10..3.13, no -dev/t builds
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
versions=$( { pyenv versions --bare 2>/dev/null || ls "$root/versions" 2>/dev/null; } |
  grep -E '^3\.(10|11|12|13)\.[0-9]+$' | sort -t. -k1,1n -k2,2n -k3,3n |
  awk -F. '{ last[$1"."$2] = $0 } END { for (m in last) print last[m] }' | sort -t. -k2,2n)
[ -n "$versions" ] || { echo "no CPython 3.10..3.13 under pyenv ($root)" >&2; exit 2; }

ccache=
[ -d /usr/lib/ccache ] && ccache=/usr/lib/ccache:
clean_env=(env -u TVMNODE_BUILD_DIR -u TVMNODE_SOURCE_DIR -u PYTHONPATH -u PYTHONHOME
           -u LD_LIBRARY_PATH -u VIRTUAL_ENV)
tot_p=0 tot_f=0
nv=$(wc -w <<<"$versions") vi=0
fail() { echo "python $minor: $1 (see $log)" >&2; echo "python $minor: 0 passed, 1 failed, 0 skipped"; tot_f=$((tot_f + 1)); }
for v in $versions; do
  minor=${v%.*} at=$vi vi=$((vi + 1))
  py="$root/versions/$v/bin/python3"
  dir="$WORK/$minor" venv="$WORK/$minor/venv" log="$WORK/$minor/log"
  mkdir -p "$dir" && : >"$log"
  echo "== python $v" >&2
  # the extension is always rebuilt (setuptools goes by file times, which a
  # checkout or a copy can leave older than an old build); the library's
  # make keeps its dependency tracking and is reused
  rm -rf "$venv" "$dir/dist" "$dir"/build/lib.* "$dir"/build/temp.*/src "$dir"/build/bdist.*
  if ! "$py" -m venv "$venv" >>"$log" 2>&1; then fail "no venv"; continue; fi
  vpy="$venv/bin/python"
  pip_q "$vpy" -m pip install --upgrade pip setuptools wheel >>"$log" 2>&1 || { fail "pip failed"; continue; }
  # one at a time: a package without a wheel for this Python is skipped, and
  # so are the tests that need it
  for p in $PACKAGES; do
    pip_q "$vpy" -m pip install "$p" >>"$log" 2>&1 || echo "python $minor: no $p (its tests skip)" >&2
  done
  # through ccache where it is installed (./dev installs it): the library's
  # objects are the same for every interpreter (no debug info, the same
  # flags and sources), so the second version on takes the first's
  if ! (cd "$dir" && "${clean_env[@]}" PATH="$ccache$PATH" TVMNODE_PY_BUILD_BASE="$dir/build" \
        "$vpy" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation \
        -w "$dir/dist" "$HERE") >>"$log" 2>&1; then
    tail -30 "$log" >&2; fail "wheel build failed"; continue
  fi
  whl=$(ls "$dir"/dist/tvmnode-*.whl)
  echo "python $minor: $(basename "$whl") $(du -k "$whl" | cut -f1) KiB" >&2
  pip_q "$vpy" -m pip install --force-reinstall --no-deps "$whl" >>"$log" 2>&1 ||
    { fail "installing the wheel failed"; continue; }
  junit="$dir/junit.xml"
  rm -f "$junit"
  # from $dir: neither python/ nor a build tree is on sys.path
  ignore=() sweeps=()
  for t in "${SAME_ON_EVERY_PYTHON[@]}"; do ignore+=(--ignore "$HERE/tests/$t"); done
  k=0
  for t in "${SWEEPS[@]}"; do
    # the full matrix runs sweep k on version k mod nv; the rest, collected
    if [ "$FULL" != 1 ] || [ $((k % nv)) -ne "$at" ]; then
      ignore+=(--ignore "$HERE/tests/$t"); sweeps+=("$HERE/tests/$t")
    fi
    k=$((k + 1))
  done
  if [ ${#sweeps[@]} -gt 0 ]; then
    # the sweeps collected (imported) only: an import error is a failure
    if ! (cd "$dir" && "${clean_env[@]}" "$vpy" -m pytest -q --collect-only -p no:cacheprovider \
          -c "$HERE/pyproject.toml" --rootdir "$HERE" "${sweeps[@]}") >"$dir/collect.log" 2>&1; then
      tail -30 "$dir/collect.log" >&2; fail "collecting the operator sweeps failed"; continue
    fi
  fi
  (cd "$dir" && "${clean_env[@]}" "$vpy" -m pytest -q -p no:cacheprovider -rfE \
     -n "${TNPY_WORKERS:-2}" --dist loadfile "${ignore[@]}" \
     -c "$HERE/pyproject.toml" --rootdir "$HERE" --junit-xml="$junit" "$HERE/tests" "$@") \
     >"$dir/pytest.log" 2>&1
  rc=$?
  read -r p f s < <("$vpy" "$HERE/tools/junit_count.py" "$junit")
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ "$f" -ne 0 ]; then
    grep -E '^(FAILED|ERROR) ' "$dir/pytest.log" >&2 || tail -30 "$dir/pytest.log" >&2
  fi
  echo "python $minor: $p passed, $f failed, $s skipped"
  tot_p=$((tot_p + p)) tot_f=$((tot_f + f))
done
echo "python $(for v in $versions; do printf '%s\n' "${v%.*}"; done | paste -sd,): $tot_p passed, $tot_f failed"
[ "$tot_f" -eq 0 ]
