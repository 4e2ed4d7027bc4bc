# Shared by the scripted tests (sourced, not run: tests/run.sh runs only
# tests/scripts/*.sh).  Set T to the test's prefix before sourcing.
#   pass NAME, fail NAME [WHY], skip NAME WHY: the result lines run.sh counts
#   scratch_dir: a private directory under $TUX3_SCRATCH (or /tmp) in $work,
#                removed on exit
pass() { echo "PASS $T/$1"; }
fail() { echo "FAIL $T/$1${2:+: $2}"; }
skip() { echo "SKIP $T/$1${2:+: $2}"; }

scratch_dir() {
	# no directory, no test: an empty $work would put its files in /
	if ! work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/$T.XXXXXX") ||
	   [ ! -d "$work" ]; then
		fail scratch "cannot make a directory under ${TUX3_SCRATCH:-/tmp}"
		exit 1
	fi
	trap 'rm -rf "$work"' EXIT INT TERM
}

# require_tools TOOL...: skip the whole script (and exit) when one is missing
require_tools() {
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			skip all "needs $tool"
			exit 0
		fi
	done
}
