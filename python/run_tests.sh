#!/usr/bin/env bash
# run_tests.sh BUILD_DIR: build the Python binding against the C library of
# BUILD_DIR (an autotools build tree) and run its tests: pytest over
# python/tests (with the wheel test of tests/test_wheel.py), then mypy over the tests, the benchmarks and the package (the .pyi stubs
# must type-check the tests). The last line reads
#   python tests: N passed, M failed
# where the mypy run counts as one test; the exit status is non-zero when
# anything failed.
set -u
BUILD=${1:-}
TNPY_PACKAGES="pytest pytest-xdist numpy ml_dtypes mypy wheel tflite tflite-micro ai-edge-litert onnx onnxruntime tritonclient[grpc,http]"
. "$(dirname "$0")/tools/env.sh"

# install the package into the venv too, so its console script `tvmnode`
# exists as a user's pip install makes it (the extension against this tree)
(cd "$HERE" && TVMNODE_BUILD_DIR="$BUILD" "$VPY" -m pip install -q --no-deps \
   --no-build-isolation --disable-pip-version-check . >"$BUILD/python/install.log" 2>&1) ||
  { cat "$BUILD/python/install.log" >&2; echo "pip install ./python failed" >&2; exit 2; }

# the generated C of the tests is built by the system compiler through
# ccache where it is installed (./dev deps installs it), as ./dev's makes
# are: build_library compiles each source on its own from inside its
# archive, so the runtime's sources, the same in every archive, are
# compiled once for the whole suite (about 6 s each time for the x86
# forms), and the firmware's the same way
[ -d /usr/lib/ccache ] && export PATH="/usr/lib/ccache:$PATH"

junit="$BUILD/python/junit.xml"
rm -f "$junit"
# run from the build tree so that the package found is the one built there
# (python -m puts the working directory first on sys.path). test_wheel.py
# also builds the self-contained wheel and smoke-tests it in a fresh venv
# (about half a minute; TVMNODE_TEST_WHEEL=0 skips it).
# Two workers (the machines have two cores), each taking whole files so
# that a file's module-scoped fixtures (a model compiled once) run once.
(cd "$BUILD/python" && TVMNODE_TEST_WHEEL=${TVMNODE_TEST_WHEEL:-1} "$VPY" -m pytest -q \
   -n "${TNPY_WORKERS:-2}" --dist loadfile \
   -p no:cacheprovider -c "$HERE/pyproject.toml" \
   --rootdir "$HERE" --junit-xml="$junit" "$HERE/tests")
pytest_rc=$?

(cd "$HERE" && "$VPY" -m mypy --cache-dir "$BUILD/python/mypy_cache" tvmnode tests examples bench)
mypy_rc=$?

# the ONNX node-test count the README quotes (the tests themselves ran in
# pytest, test_frontend_onnx.py)
(cd "$BUILD/python" && PYTHONPATH=lib "$VPY" "$HERE/tests/onnx_node_tests.py" 2>/dev/null |
   grep "^onnx node tests:") || true

read -r passed failed _ < <("$VPY" "$HERE/tools/junit_count.py" "$junit")
if [ "$pytest_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
if [ "$mypy_rc" -eq 0 ]; then
  echo "mypy: no issues"
  passed=$((passed + 1))
else
  echo "mypy: FAILED"
  failed=$((failed + 1))
fi
echo "python tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
