#!/usr/bin/env bash
# gen.sh: generates the device session's messages from tvmnode_session.proto:
# the C of the device's side with nanopb's generator (Debian's nanopb,
# which ./dev installs) into runtime/crt/src, and the Go of the host's side
# with protoc and protoc-gen-go into go/serve/device/sessionpb. Both are
# checked in: building needs neither generator.
set -euo pipefail
cd "$(dirname "$0")"
top=../../..
command -v nanopb_generator.py >/dev/null || {
  echo "gen.sh: nanopb_generator.py not found (apt-get install nanopb)" >&2
  exit 1
}
nanopb_generator.py -q -L '#include "session_%s"' -f tvmnode_session.options \
  -D ../src tvmnode_session.proto
# protoc-gen-go at go/serve/gen.sh's version, in its temporary GOPATH
PROTOC_GEN_GO="$(sed -n 's/^PROTOC_GEN_GO=//p' "$top/go/serve/gen.sh")"
bin="${GEN_GOPATH:-${TMPDIR:-/tmp}/tvmnode-serve-gen}"
export GOPATH="$bin" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
[[ -x $bin/bin/protoc-gen-go ]] ||
  go install "google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO"
mkdir -p "$top/go/serve/device/sessionpb"
PATH="$bin/bin:$PATH" protoc -I . --go_out="$top/go/serve/device/sessionpb" \
  --go_opt=paths=source_relative tvmnode_session.proto
