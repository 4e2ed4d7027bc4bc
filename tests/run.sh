#!/bin/sh
# Run every test against each build tree given (e.g. build build-asan).
#   unit tests:    BUILD/tests/unit/*   (C, one forked child per case)
#   script tests:  tests/scripts/*.sh   (called with BUILD as $1)
# Each prints PASS/FAIL/SKIP lines; this counts them and ends with
#   N passed, N failed, N skipped
# Oracle volumes from ../shared/oracle are decompressed once into a
# scratch directory (tests using them skip where ../shared is absent).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
[ $# -ge 1 ] || set -- build

scratch=$(mktemp -d /tmp/tux3-tests.XXXXXX)
trap 'rm -rf "$scratch"' EXIT INT TERM
export TUX3_SCRATCH="$scratch"

oracle_src="$top/../shared/oracle"
if [ -d "$oracle_src" ] && command -v zstd >/dev/null 2>&1; then
	mkdir -p "$scratch/oracle"
	for z in "$oracle_src"/*.img.zst; do
		[ -e "$z" ] || continue
		zstd -q -d "$z" -o "$scratch/oracle/$(basename "$z" .zst)" ||
			echo "warning: cannot decompress $z" >&2
	done
	chmod a-w "$scratch/oracle"/*.img 2>/dev/null
	export TUX3_ORACLE_DIR="$scratch/oracle"
	export TUX3_ORACLE_SRC="$oracle_src"
fi

log="$scratch/results"
: > "$log"
start=$(date +%s)
for build in "$@"; do
	flavour=$(basename "$build")
	export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=86"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
	for t in "$build"/tests/unit/*; do
		[ -x "$t" ] || continue
		"$t" 2>&1 | sed -n "s#^\(PASS\|FAIL\|SKIP\) #\1 $flavour/#p" |
			tee -a "$log" | grep -v '^PASS' || true
	done
	for s in tests/scripts/*.sh; do
		[ -e "$s" ] || continue
		sh "$s" "$build" 2>&1 | sed -n "s#^\(PASS\|FAIL\|SKIP\) #\1 $flavour/#p" |
			tee -a "$log" | grep -v '^PASS' || true
	done
done
end=$(date +%s)
pass=$(grep -c '^PASS' "$log")
fail=$(grep -c '^FAIL' "$log")
skip=$(grep -c '^SKIP' "$log")
echo "tests took $((end - start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
