#!/usr/bin/env bash
# Builds wrk2 (giltene/wrk2: wrk at a fixed rate, latency corrected for
# coordinated omission) into /tmp/wrk2/wrk, where ../shared/peers/side-by-side.sh
# looks for it (its WRK2); without it that script skips its open-loop rows.
# Needs git, make, gcc and the OpenSSL headers (apt-get install -y libssl-dev).
#
#   bench/build-wrk2.sh                      clone from GitHub, build, install
#   WRK2_SRC=/path/to/clone bench/build-wrk2.sh
#   WRK2_DIR=/elsewhere bench/build-wrk2.sh  then: WRK2=/elsewhere/wrk ../shared/peers/side-by-side.sh
set -euo pipefail
SRC="${WRK2_SRC:-https://github.com/giltene/wrk2.git}"
DEST="${WRK2_DIR:-/tmp/wrk2}"
if [ -x "$DEST/wrk" ]; then echo "$DEST/wrk is already there"; exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone -q "$SRC" "$work/wrk2"
if ! make -C "$work/wrk2" -j"$(nproc)" > "$work/build.log" 2>&1; then
  tail -20 "$work/build.log" >&2
  echo "wrk2 did not build (log above)" >&2
  exit 1
fi
mkdir -p "$DEST"
cp "$work/wrk2/wrk" "$DEST/wrk"
git -C "$work/wrk2" rev-parse --short HEAD > "$DEST/.commit"
echo "built $DEST/wrk (giltene/wrk2 $(cat "$DEST/.commit"))"
