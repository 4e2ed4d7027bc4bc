#!/bin/sh
# Line and branch coverage of the tests (make coverage):
#   sh scripts/coverage.sh BUILD-COV      (a tree built with --coverage)
# Installs gcovr if it is missing (as root, with apt-get; otherwise names
# the package and stops), clears the counters of an earlier run, runs
# tests/run.sh on BUILD-COV (TESTS= and TEST_JOBS= as for make check), then
# prints coverage per folder of the sources (lines, then branches), the
# total, and the COVERAGE_LOW (default 10) least-covered files by lines.
# The per-file figures stay in BUILD-COV/coverage.csv.  The exit status is
# the tests' (the figures are printed either way).
set -u
cov=${1:-build-cov}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

if ! command -v gcovr >/dev/null 2>&1; then
	if [ "$(id -u)" != 0 ]; then
		echo "coverage: gcovr is missing: apt-get install gcovr (as root)" >&2
		exit 1
	fi
	echo "coverage: installing gcovr"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends gcovr > /dev/null 2>&1 ||
		{ apt-get update -qq > /dev/null &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends gcovr > /dev/null; } ||
		{ echo "coverage: apt-get install gcovr failed" >&2; exit 1; }
fi

find "$cov" -name '*.gcda' -delete
sh tests/run.sh "$cov"
rc=$?

# the sources only: not the tests, their fixtures or generated files
gcovr --root . --object-directory "$cov" \
	--filter 'common/' --filter 'mkfs/' --filter 'fsck/' \
	--filter 'debugfs/' --filter 'dump/' --filter 'fuse/' \
	--csv -o "$cov/coverage.csv" "$cov" ||
	{ echo "coverage: gcovr failed" >&2; exit 1; }

# coverage.csv: filename,line_total,line_covered,line_percent,
# branch_total,branch_covered,branch_percent,...
echo "== coverage per folder (lines, branches) =="
awk -F, 'NR > 1 {
		dir = $1; sub(/\/[^\/]*$/, "", dir)
		add(dir)
		# a folder with subfolders also as a whole
		top = dir; sub(/\/.*/, "", top)
		if (top != dir)
			add(top "/ (all)")
		LT += $2; LC += $3; BT += $5; BC += $6
	}
	function add(d) { lt[d] += $2; lc[d] += $3; bt[d] += $5; bc[d] += $6 }
	function pct(c, t) { return t ? sprintf("%5.1f%%", 100 * c / t) : "    -" }
	END {
		for (d in lt)
			printf "  %-16s %s of %6d lines   %s of %6d branches\n",
				d, pct(lc[d], lt[d]), lt[d], pct(bc[d], bt[d]), bt[d]
		printf "  %-16s %s of %6d lines   %s of %6d branches\n",
			"total", pct(LC, LT), LT, pct(BC, BT), BT > "/dev/stderr"
	}' "$cov/coverage.csv" 2>"$cov/coverage.total" | sort
cat "$cov/coverage.total"
rm -f "$cov/coverage.total"

echo "== least-covered files (lines) =="
awk -F, 'NR > 1 && $2 > 0 {
		printf "  %5.1f%%  %5d of %5d lines  %s\n", 100 * $3 / $2, $3, $2, $1
	}' "$cov/coverage.csv" | sort -n | head -n "${COVERAGE_LOW:-10}"
exit $rc
