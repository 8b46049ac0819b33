#!/usr/bin/env bash
# The reference build of bench/log-cost.ts's budget ("none"): a copy of a
# built dist/ with what request tracing added to every request taken out
# (the request id, the x-request-id header, the request metrics and the access
# line), so that `--entry DEST/src/main.js` compares the same code with and
# without them. Usage: bench/without-request-extras.sh [SRC_DIST] DEST
# (SRC_DIST defaults to dist). Fails if a patched line is not found, so the
# copy cannot silently keep what it should remove.
set -euo pipefail
src=${2:+$1}
src=${src:-dist}
dest=${2:-$1}
rm -rf "$dest"
cp -r "$src" "$dest"
front=$dest/src/front

patch() { # file, perl substitution, what must no longer be there
  perl -0pi -e "$2" "$1"
  if grep -q -- "$3" "$1"; then echo "without-request-extras: '$3' is still in $1" >&2; exit 1; fi
}
patch "$front/exchange.js" 's/\(0, request_id_1\.givenRequestId\)\([^;]*\);/"";/; s/\(0, request_id_1\.nextIdSeq\)\(\)/0/' 'nextIdSeq)()'
patch "$front/exchange.js" 's/\.writeHeader\((?:request_id_1\.)?REQUEST_ID_HEADER, \(0, request_id_1\.requestIdBytes\)\(this\)\)//g' 'requestIdBytes)(this)'
patch "$front/answer.js" 's/handler\.requestId = \(\) => ex\.requestId;//' 'handler.requestId = () =>'
patch "$front/access-log.js" 's/^(function exchangeFinished\(ex, status\) \{)$/$1\n    return; \/\/ without-request-extras/m' 'ZZZ-never'
grep -q 'return; // without-request-extras' "$front/access-log.js" || { echo "without-request-extras: exchangeFinished not found" >&2; exit 1; }
echo "$dest: without request ids, x-request-id, request metrics and access lines"
