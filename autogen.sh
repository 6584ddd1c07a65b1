#!/bin/sh
# autogen.sh: generate ./configure from a git checkout.
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf --install --force
