#!/bin/sh
# libtux3's layering, measured on the build's objects (scripts/layers.py:
# nm call edges and #include edges between library files, ranked by layer):
#   layers/upward    no call or include runs from a lower layer up to a
#                    higher one (io < format < core < write < version <
#                    top < check)
#   layers/loops     every loop of files calling each other stays inside
#                    one layer folder (the write layer's allocation and
#                    atom-table recursion, the version layer's own), and
#                    none is larger than 12 files
#   layers/root      no more than 20 .c files at common/'s root
# The full report is kept in BUILD/layers.log.
set -u
T=layers
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)

if ! command -v python3 >/dev/null 2>&1 || ! command -v nm >/dev/null 2>&1; then
	skip all "needs python3 and nm"
	exit 0
fi
log=$build/layers.log
python3 "$top/scripts/layers.py" "$build" "$top" > "$log" 2>&1
rc=$?
if [ $rc -ge 2 ]; then
	fail all "scripts/layers.py exit $rc (see $log)"
	exit 0
fi

up=$(sed -n 's/^layers: .*, \([0-9]*\) upward call arrows, \([0-9]*\) upward include arrows,.*/\1 \2/p' "$log")
if [ "$up" = "0 0" ]; then
	pass upward
else
	fail upward "calls, includes: ${up:-none measured} (see $log)"
fi

# The largest loop's line, then one line per other loop of two or more.
bad=$(sed -n -e 's/^largest loop: \([0-9]*\) files: \(.*\)/\1 \2/p' \
	-e 's/^  \([0-9]*\) files: \(.*\)/\1 \2/p' "$log" |
	while read -r n files; do
		[ "$n" -le 1 ] && continue
		[ "$n" -gt 12 ] && { echo "$n files"; continue; }
		dirs=$(for f in $files; do dirname "$f"; done | sort -u | wc -l)
		[ "$dirs" -gt 1 ] && echo "across folders: $files"
	done)
if grep -q '^largest loop:' "$log" && [ -z "$bad" ]; then
	pass loops
else
	fail loops "${bad:-no loop report} (see $log)"
fi

n=$(find "$top/common" -maxdepth 1 -name '*.c' | wc -l)
if [ "$n" -le 20 ]; then
	pass root
else
	fail root "$n .c files at common/'s root"
fi
