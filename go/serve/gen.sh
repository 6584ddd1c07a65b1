#!/usr/bin/env bash
# go/serve/gen.sh: regenerate inference/*.pb.go from proto/grpc_predict_v2.proto
# with protoc (Debian's protobuf-compiler) and the standard plugins, installed
# into a temporary GOPATH from the Go module proxy at the versions below. The
# generated files are checked in: building the server needs no protoc.
set -euo pipefail
cd "$(dirname "$0")"
PROTOC_GEN_GO=v1.36.12
PROTOC_GEN_GO_GRPC=v1.5.1
command -v protoc >/dev/null || {
  echo "gen.sh: protoc not found (apt-get install protobuf-compiler)" >&2
  exit 1
}
bin="${GEN_GOPATH:-${TMPDIR:-/tmp}/tvmnode-serve-gen}"
export GOPATH="$bin" GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
[[ -x $bin/bin/protoc-gen-go ]] || go install google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO
[[ -x $bin/bin/protoc-gen-go-grpc ]] ||
  go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC
PATH="$bin/bin:$PATH" protoc -I proto \
  --go_out=inference --go_opt=paths=source_relative \
  --go-grpc_out=inference --go-grpc_opt=paths=source_relative \
  proto/grpc_predict_v2.proto
echo "gen.sh: wrote inference/grpc_predict_v2.pb.go, inference/grpc_predict_v2_grpc.pb.go"
