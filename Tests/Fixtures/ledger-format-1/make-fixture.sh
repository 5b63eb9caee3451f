#!/bin/sh
# Records the fixture ledger of this directory with a built jqc, and the
# outputs that jqc printed for it. Run from the repository's root:
#
#   Tests/Fixtures/ledger-format-1/make-fixture.sh .build/debug/jqc
#
# It is kept as it was recorded (jqc 0.1.0, store format inspection-ledger/1,
# views of version 1): run it again only to make a new fixture in a new
# directory, never to refresh this one, or the test stops testing old ledgers.
set -eu
JQC=${1:?usage: make-fixture.sh PATH-TO-JQC}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export JQC_HOME="$WORK/ledger" NO_COLOR=1
jqc() { "$JQC" "$@"; }
id_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }
png() { python3 - "$1" "$2" <<'PY'
import struct, sys, zlib
path, red = sys.argv[1], int(sys.argv[2])
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
raw = b"".join(b"\x00" + bytes([red, 30, 30]) * 2 for _ in range(2))
with open(path, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
PY
}

jqc init
jqc pull --from Tools/fixtures/reference.json
png "$WORK/leak.png" 10
png "$WORK/sig.png" 250
png "$WORK/wall.png" 120

# A restroom inspection with a photo, a signature and an issue, submitted
# with a follow-up.
A=$(jqc --as Dana --json start --template "Restroom QC" --facility "Riverside Medical Center" --area 1001 | id_of)
for pair in "Floors=4" "3=5" "4=2" "Soap dispensers stocked=pass" "6=FAIL" "Trash emptied=yes" \
    "Odor=acceptable" "Notes=Stall 3 out of order"; do
    jqc --as Dana set "$A" "${pair%%=*}" "${pair#*=}"
done
jqc --as Dana photo "$A" "Photo of problem area" "$WORK/leak.png"
jqc --as Dana sign "$A" 11 "$WORK/sig.png"
jqc --as Dana flag "$A" -s high -d "Leaking tap" --photo "$WORK/leak.png"
jqc --as Dana submit "$A" --follow-up

# Its re-inspection, by someone else, submitted: it clears the follow-up.
B=$(jqc --as "Sam Okafor" --json start --reinspect "$A" | id_of)
for pair in "2=5" "3=5" "5=pass"; do jqc --as "Sam Okafor" set "$B" "${pair%%=*}" "${pair#*=}"; done
jqc --as "Sam Okafor" submit "$B"

# An office inspection (the second template), submitted without follow-up.
C=$(jqc --as Dana --json start -t 22 -f 102 | id_of)
for pair in "Supervisor on site=Ana Ruiz" "Supervisor email=ana@example.com" "Last deep clean=2026-11-02" \
    "Occupants present=12.50" "Shift=evening" "Areas covered=Lobby, Desks" "8=3" "9=4" "10=pass" \
    "Supplies counted=Towels,4,no;Soap,1,yes"; do
    jqc --as Dana set "$C" "${pair%%=*}" "${pair#*=}"
done
jqc --as Dana clear "$C" "Occupants present"
jqc --as Dana submit "$C"

# A draft left open, with an issue.
D=$(jqc --as Dana --json start -t 22 -f 101 --area 1002 | id_of)
jqc --as Dana set "$D" "Supervisor on site" "Lee"
jqc --as Dana flag "$D" -s low -d "Scuffed wall" --photo "$WORK/wall.png"

# A draft discarded.
E=$(jqc --as Dana --json start -t 11 -f 101 | id_of)
jqc --as Dana set "$E" Floors 3
jqc --as Dana discard "$E" --reason "wrong facility"

jqc verify
rm -rf "$HERE/ledger" "$HERE/expected"
mkdir -p "$HERE/ledger/store" "$HERE/expected/show"
cp "$JQC_HOME/store/data.mdb" "$HERE/ledger/store/"
cp "$JQC_HOME/config.json" "$HERE/ledger/"
cp -R "$JQC_HOME/photos" "$HERE/ledger/photos"
for listing in inspections drafts followups issues outbox; do
    jqc --json "$listing" >"$HERE/expected/$listing.json"
done
for id in "$A" "$B" "$C" "$D" "$E"; do jqc --json show "$id" >"$HERE/expected/show/$id.json"; done
jqc digest >"$HERE/expected/digest.txt"
jqc --json verify >"$HERE/expected/verify.json"
