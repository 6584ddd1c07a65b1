#!/usr/bin/env bash
# run_main.sh BUILD_DIR [--print before|after|both|none]: the main job's
# Python part. Builds the binding against BUILD_DIR, then builds the
# MLPerf Tiny AD autoencoder in Python and runs Python and C passes in one
# pipeline under the timing instrument (examples/main_job.py).
set -u
BUILD=${1:-}
shift || true
TNPY_PACKAGES="numpy"
. "$(dirname "$0")/tools/env.sh"
exec "$VPY" "$HERE/examples/main_job.py" "$@"
