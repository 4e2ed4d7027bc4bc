#!/bin/sh
# Robustness: damaged volumes must make tux3debug fail cleanly.
#
#   sh tests/scripts/robust.sh BUILD        (BUILD = build or build-asan)
#
# BUILD/tests/corrupt writes damaged variants of some oracle volumes
# ($TUX3_ORACLE_DIR) into $TUX3_SCRATCH, each listed with the block its
# error must name.  Every read-only command (super, log, manifest /,
# ls -l /, stat T, cat T, rdump / DIR) then runs on every variant under
# `timeout 20` (scaled for the build: lib/time_limit.sh), and one line is
# printed per variant and command:
#   PASS robust/IMAGE/VARIANT/CMD | FAIL ...: reason | SKIP ...: reason
# A command that must read the damaged part has to exit non-zero with a
# message naming the expected block ("block N"; for superblock damage, any
# error line).  Every command, failing or not: no sanitizer report (exit 86
# or "Sanitizer"/"runtime error" on stderr), no signal (status >= 128), no
# timeout (124), and the image bit-identical afterwards (its CRC before and
# after each command).  The pristine sources are checked the same way
# ("control": every command must succeed), which shows the harness itself
# accepts a good volume.
set -u
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
case $build in /*) ;; *) build=$top/$build ;; esac
. "$top/tests/scripts/lib/time_limit.sh"
limit=$(time_limit 20)
dbg=$build/tux3debug
corrupt=$build/tests/corrupt

if [ -z "${TUX3_ORACLE_DIR:-}" ]; then
	echo "SKIP robust/all: TUX3_ORACLE_DIR is not set (no oracle volumes)"
	exit 0
fi
if [ ! -x "$dbg" ] || [ ! -x "$corrupt" ]; then
	echo "SKIP robust/all: $build/tux3debug or $build/tests/corrupt is not built"
	exit 0
fi
# run.sh sets these; the same defaults when the script runs on its own
: "${ASAN_OPTIONS:=detect_leaks=1:abort_on_error=0:exitcode=86}"
: "${UBSAN_OPTIONS:=print_stacktrace=1:halt_on_error=1:exitcode=86}"
export ASAN_OPTIONS UBSAN_OPTIONS

if [ -n "${TUX3_SCRATCH:-}" ] && [ -d "$TUX3_SCRATCH" ]; then
	work=$(mktemp -d "$TUX3_SCRATCH/robust.XXXXXX") || exit 2
else
	work=$(mktemp -d /tmp/tux3-robust.XXXXXX) || exit 2
fi
trap 'rm -rf "$work"' EXIT INT TERM

# The image must not change: its CRC (cksum) before and after each
# command.  Not a cryptographic hash: what it must catch is a write by
# mistake, and the volumes are sparse files of up to 256 MiB, read whole
# eight times per variant (sha256 made it half of this group's time).
sha() { cksum < "$1" | cut -d' ' -f1-2; }

# Sources: IMAGE TARGET CATEGORIES TARGET_IN_ROOT TARGET_HAS_XATTR
# TARGET is the file that stat/cat read and whose inode, attributes and
# data tree the attr/dleaf variants damage.
sources='small-delta	/hello.txt	sb,trunc,log,ileaf,attr,dir,atom	yes	yes
empty-512	/	sb,trunc,log,ileaf	no	no
orphan	<65>	dleaf	no	no
tree-fuse	/files/sparse	bnode	no	no'

cmds='super log manifest ls stat cat rdump'

cmdline() {	# CMD TARGET RDUMPDIR
	case $1 in
	super) echo "super" ;;
	log) echo "log" ;;
	manifest) echo "manifest /" ;;
	ls) echo "ls -l /" ;;
	stat) echo "stat $2" ;;
	cat) echo "cat $2" ;;
	rdump) echo "rdump / $3" ;;
	esac
}

# Must CMD fail on VARIANT?  "fail" or "any" (may succeed: it need not
# read the damaged part).  $in_root/$has_xattr describe the target.
expect() {	# VARIANT CMD
	v=$1 c=$2
	case $v in
	control)
		# cat of a directory target fails by design
		[ "$c" = cat ] && [ "$target" = / ] && echo any || echo ok
		return ;;
	sb-atomgen-huge)
		# only xattr names read the atom table
		case $c in
		stat|manifest|rdump) [ "$has_xattr" = yes ] && echo fail || echo any ;;
		*) echo any ;;
		esac
		return ;;
	bnode-keys-order|bnode-child-outside)
		# replay succeeds; the live root fails when a lookup reads it
		case $c in super|log) echo any ;; *) echo fail ;; esac
		return ;;
	sb-*|truncated-*|log-*|bnode-*)
		echo fail; return ;;	# the volume cannot be opened
	esac
	case $c in super|log) echo any; return ;; esac
	case $v in
	ileaf-*) echo fail ;;
	attr-*|dleaf-*)
		case $c in
		stat|cat) echo fail ;;
		ls) [ "$in_root" = yes ] && echo fail || echo any ;;
		manifest|rdump) [ "$is_path" = yes ] && echo fail || echo any ;;
		esac ;;
	dir-last-*)
		case $c in stat|cat) echo any ;; *) echo fail ;; esac ;;
	dir-*)
		case $c in
		stat|cat) [ "$is_path" = yes ] && echo fail || echo any ;;
		*) echo fail ;;
		esac ;;
	atom-*)
		case $c in
		stat|manifest|rdump) [ "$has_xattr" = yes ] && echo fail || echo any ;;
		*) echo any ;;
		esac ;;
	*) echo any ;;
	esac
}

# Run every command on one image; print a line per command.
check_variant() {	# IMAGEFILE LABEL VARIANT EXPECTED-BLOCK
	f=$1 label=$2 v=$3 blk=$4
	sum=$(sha "$f")
	if [ -z "$sum" ]; then
		echo "FAIL robust/$label: cannot hash $f"
		return
	fi
	for c in $cmds; do
		name="robust/$label/$c"
		dir="$work/rdump.$tag"
		rm -rf "$dir"
		line=$(cmdline "$c" "$target" "$dir")
		want=$(expect "$v" "$c")
		timeout "$limit" "$dbg" -R "$line" "$f" >/dev/null 2>"$work/err.$tag"
		rc=$?
		rm -rf "$dir"
		err="$work/err.$tag"
		first=$(grep -m1 'tux3debug: ' "$err" | cut -c1-200)
		after=$(sha "$f")
		if [ "$rc" -eq 124 ]; then
			echo "FAIL $name: timed out after $limit s ($line)"
		elif [ "$rc" -eq 86 ] || grep -q 'Sanitizer\|runtime error' "$err"; then
			echo "FAIL $name: sanitizer report (exit $rc): $(grep -m1 'ERROR\|runtime error' "$err" | cut -c1-200)"
		elif [ "$rc" -ge 128 ]; then
			echo "FAIL $name: killed by signal $((rc - 128))"
		elif [ "$after" != "$sum" ]; then
			echo "FAIL $name: the image changed ($line)"
		elif [ "$want" = ok ] && [ "$rc" -ne 0 ]; then
			echo "FAIL $name: exit $rc on a good volume: $first"
		elif [ "$want" = fail ] && [ "$rc" -eq 0 ]; then
			echo "FAIL $name: exit 0, the damage went unnoticed ($line)"
		elif [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
			echo "FAIL $name: unexpected exit $rc: $first"
		elif [ "$want" = fail ] && [ "$blk" != - ] &&
		     ! grep -Eq "block $blk([^0-9]|\$)" "$err"; then
			echo "FAIL $name: error does not name block $blk: $first"
		elif [ "$want" = fail ] && [ -z "$first" ]; then
			echo "FAIL $name: exit $rc without an error message"
		else
			echo "PASS $name"
		fi
	done
	rm -f "$work/err.$tag"
}

# Check a list of variants (lines of LIST) whose line number modulo
# $jobs is $shard.
run_shard() {	# SHARD JOBS IMAGE LISTFILE OUTDIR
	n=0 tag=$1
	while IFS='	' read -r v blk desc; do
		n=$((n + 1))
		[ $((n % $2)) -eq "$1" ] || continue
		check_variant "$5/$v.img" "$3/$v" "$v" "$blk"
	done < "$4"
}

# The sanitizer build checks one variant in ROBUST_SAMPLE (default 3; a
# different residue per source volume, so every kind of damage still comes
# up), the normal build every one: the sanitizer adds memory errors to what
# a variant shows (and made this group 221 s of CPU against 154 s).
case $(basename "$build") in
*asan*) sample=${ROBUST_SAMPLE:-3} ;;
*) sample=${ROBUST_SAMPLE:-1} ;;
esac

jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=2
[ "$jobs" -le 4 ] || jobs=4

printf '%s\n' "$sources" > "$work/sources"
i=0
while IFS='	' read -r image target cats in_root has_xattr; do
	i=$((i + 1))
	src="$TUX3_ORACLE_DIR/$image.img"
	case $target in /*) is_path=yes ;; *) is_path=no ;; esac
	if [ ! -r "$src" ]; then
		echo "SKIP robust/$image: $src not found"
		continue
	fi
	out="$work/$image"
	"$corrupt" -t "$target" -c "$cats" "$src" "$out" 2>"$work/corrupt.err"
	rc=$?
	if [ $rc -ne 0 ] || [ ! -s "$out/list" ]; then
		echo "FAIL robust/$image/generate: corrupt exited $rc: $(grep -m1 . "$work/corrupt.err" | cut -c1-200)"
		continue
	fi
	echo "PASS robust/$image/generate"
	if [ "$sample" -gt 1 ]; then
		mv "$out/list" "$out/list.all"
		awk -v s="$sample" -v r="$i" 'NR % s == r % s' "$out/list.all" > "$out/list"
		echo "# robust/$image: $(wc -l < "$out/list") of $(wc -l < "$out/list.all") variants (one in $sample)" >&2
	fi
	sed -n 's/^corrupt: \([^:]*\): skipped (\(.*\))$/SKIP robust\/'"$image"'\/\1: \2/p' \
		"$work/corrupt.err"

	# the pristine source: every command must succeed on it
	tag=c
	check_variant "$src" "$image/control" control - > "$work/res.$i.c" &

	s=0
	while [ $s -lt "$jobs" ]; do
		run_shard $s "$jobs" "$image" "$out/list" "$out" > "$work/res.$i.$s" &
		s=$((s + 1))
	done
	wait
	cat "$work/res.$i.c"
	# print in list order: variant by variant
	while IFS='	' read -r v blk desc; do
		cat "$work"/res.$i.[0-9]* | grep "^[A-Z]* robust/$image/$v/"
	done < "$out/list"
	rm -rf "$out"
done < "$work/sources"
exit 0
