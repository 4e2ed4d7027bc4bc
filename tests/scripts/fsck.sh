#!/bin/sh
# fsck.tux3: the oracle volumes (clean ones exit 0 with -n; the two
# corrupt-bitmap volumes exit 4 with -n and stay bit-identical, -y repairs
# them with exit 1 and a second -n exits 0), the exit codes of the fsck(8)
# contract, and the e2fsprogs-style cases in tests/fsck/NAME/: a `corrupt`
# script applied to an image made by mkfs.tux3 -d from a small tree, then
# fsck.tux3 -fy must print expect.1 (exit code last) and a second run
# expect.2 (clean, exit 0).  FSCK_TUX3_UPDATE=1 rewrites the expect files.
# A corrupt script gets: tux3debug, the image, the build directory.
# A case may hold `options` (fsck.tux3 options for every run), `log-crc`
# (start from an image with log CRCs), `unrepairable` (exit 4 twice) and
# `fault` (a problem code whose first repair fails in the first -fy run).
#   sh tests/scripts/fsck.sh BUILD
set -u
build=${1:-build}
fsck=$build/fsck.tux3
dbg=$build/tux3debug
mkfs=$build/mkfs.tux3
t=fsck

pass() { echo "PASS $t/$1"; }
fail() { echo "FAIL $t/$1: $2"; }
skip() { echo "SKIP $t/$1: $2"; }
if [ ! -x "$fsck" ] || [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	skip all "$fsck, $dbg or $mkfs not built"; exit 0
fi
work=$(mktemp -d "${TUX3_SCRATCH:-/tmp}/fsck.XXXXXX") ||
	{ echo "FAIL fsck/scratch: cannot make a directory under ${TUX3_SCRATCH:-/tmp}"; exit 1; }
trap 'rm -rf "$work"' EXIT INT TERM
export SOURCE_DATE_EPOCH=1700000000

# ---- oracle volumes ----
if [ -n "${TUX3_ORACLE_DIR:-}" ] && [ -d "$TUX3_ORACLE_DIR" ]; then
	for img in "$TUX3_ORACLE_DIR"/*.img; do
		[ -e "$img" ] || continue
		n=$(basename "$img" .img)
		cp "$img" "$work/o.img"
		chmod u+w "$work/o.img"
		sum=$(sha256sum < "$work/o.img")
		"$fsck" -n "$work/o.img" > "$work/out" 2>&1
		rc=$?
		[ "$(sha256sum < "$work/o.img")" = "$sum" ] ||
			{ fail "oracle-$n" "-n changed the image"; continue; }
		case $n in
		corrupt-bitmap*)
			[ $rc -eq 4 ] || { fail "oracle-$n" "-n exit $rc, want 4"; continue; }
			"$fsck" -y "$work/o.img" > "$work/out" 2>&1
			rc=$?
			[ $rc -eq 1 ] || { fail "oracle-$n" "-y exit $rc, want 1"; continue; }
			"$fsck" -n "$work/o.img" > "$work/out" 2>&1
			rc=$?
			[ $rc -eq 0 ] || { fail "oracle-$n" "second -n exit $rc: $(tail -3 "$work/out")"; continue; }
			"$dbg" -R check "$work/o.img" > "$work/out" 2>&1
			grep -q '^0 problems' "$work/out" ||
				{ fail "oracle-$n" "tux3debug check after -y: $(tail -2 "$work/out")"; continue; }
			pass "oracle-$n" ;;
		*)
			[ $rc -eq 0 ] || { fail "oracle-$n" "-n exit $rc: $(tail -3 "$work/out")"; continue; }
			if [ "$n" = orphan ]; then
				grep -q 'orphan pending' "$work/out" ||
					{ fail "oracle-$n" "pending orphan not reported"; continue; }
				"$fsck" -y "$work/o.img" > "$work/out" 2>&1
				rc=$?
				[ $rc -eq 0 ] || { fail "oracle-$n" "-y exit $rc, want 0"; continue; }
				"$fsck" -n "$work/o.img" > "$work/out" 2>&1
				! grep -q 'orphan pending' "$work/out" ||
					{ fail "oracle-$n" "orphan not released by -y"; continue; }
			fi
			pass "oracle-$n" ;;
		esac
	done
	# A reference volume's log head moved one bit, to an older block of
	# its own cycle's chain (orphan: 102 110 121 124 120): the chain
	# from it is shorter than the count, and taking its length would
	# lose the two newest deltas; fsck takes the head whose chain holds
	# the count and passes through it, and the namespace is whole.
	o=$TUX3_ORACLE_DIR/orphan.img
	if [ -e "$o" ]; then
		cp "$o" "$work/o.img"
		chmod u+w "$work/o.img"
		printf '\000\000\000\000\000\000\000\171' |
			dd of="$work/o.img" bs=1 seek=$((4096 + 88)) conv=notrunc \
			2> /dev/null
		"$fsck" -fy "$work/o.img" > "$work/out" 2>&1; rc=$?
		"$dbg" -R "manifest /" "$o" > "$work/m1" 2>&1
		"$dbg" -R "manifest /" "$work/o.img" > "$work/m2" 2>&1
		if [ $rc -eq 1 ] && grep -q 'PASS2_LOG_HEAD' "$work/out" &&
		   "$fsck" -fn "$work/o.img" > /dev/null 2>&1 &&
		   cmp -s "$work/m1" "$work/m2"; then
			pass oracle-log-head-older
		else
			fail oracle-log-head-older "-fy exit $rc: $(grep -m1 PASS2 "$work/out")"
		fi
	fi
else
	skip oracle "no oracle volumes"
fi

# ---- the standard tree and image ----
src=$work/src
mkdir -p "$src/d/sub"
printf 'hi\n' > "$src/a"
printf 'there\n' > "$src/d/b"
ln "$src/a" "$src/d/hard"
mkfifo "$src/fifo"
touch -d @1700000000 "$src/a" "$src/d/b" "$src/fifo" "$src/d/sub" "$src/d" "$src"
base=$work/base.img
# The cases edit log blocks to test one fault each: their base has no log
# CRC (which would catch every such edit first).  A case with a file
# `log-crc` starts from base-crc.img, made with the default features.
if ! "$mkfs" -q -U 00000000-0000-0000-0000-000000000001 -O ^log_crc \
	-d "$src" "$base" 4M > "$work/out" 2>&1 ||
   ! "$mkfs" -q -U 00000000-0000-0000-0000-000000000001 -d "$src" \
	"$work/base-crc.img" 4M > "$work/out" 2>&1; then
	fail mkfs "$(head -3 "$work/out")"; exit 0
fi

# ---- exit codes ----
cp "$base" "$work/e.img"
"$fsck" -Q "$work/e.img" > /dev/null 2>&1; rc=$?
[ $rc -eq 16 ] && pass exit-usage || fail exit-usage "bad option exit $rc"
"$fsck" -n > /dev/null 2>&1; rc=$?
[ $rc -eq 16 ] && pass exit-no-device-arg || fail exit-no-device-arg "exit $rc"
"$fsck" -n "$work/missing.img" > /dev/null 2>&1; rc=$?
[ $rc -eq 8 ] && pass exit-missing || fail exit-missing "missing device exit $rc"
"$fsck" -f "$work/e.img" < /dev/null > /dev/null 2>&1; rc=$?
[ $rc -eq 8 ] && pass exit-no-tty || fail exit-no-tty "no terminal exit $rc"
"$fsck" -n "$work/e.img" > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 0 ] && grep -q 'clean' "$work/out"; } && pass skip-sealed ||
	fail skip-sealed "exit $rc: $(head -2 "$work/out")"
"$fsck" -fn "$work/e.img" > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 0 ] && grep -q '^Pass 8' "$work/out"; } && pass force-clean ||
	fail force-clean "exit $rc"
"$fsck" -fp "$work/e.img" > "$work/out" 2>&1; rc=$?
[ $rc -eq 0 ] && pass preen-clean || fail preen-clean "exit $rc"
"$fsck" -fn -C 3 "$work/e.img" 3> "$work/prog" > /dev/null 2>&1; rc=$?
{ [ $rc -eq 0 ] && grep -Eq "^8 [0-9]+ [0-9]+ $work/e.img\$" "$work/prog"; } &&
	pass progress || fail progress "exit $rc: $(head -2 "$work/prog")"
"$fsck" -fnt "$work/e.img" > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 0 ] && grep -q '^Pass 8: time .* peak memory' "$work/out"; } &&
	pass timing || fail timing "exit $rc"
"$fsck" -V > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 0 ] && grep -q '^fsck.tux3 ' "$work/out"; } && pass version ||
	fail version "exit $rc"
# SIGINT at the start of pass 5 (a test hook raises it: deterministic)
cp "$base" "$work/s.img"
"$dbg" -w -R "set_inode 66 nlink 5" "$work/s.img" > /dev/null 2>&1
sum=$(sha256sum < "$work/s.img")
FSCK_TUX3_TEST_SIGNAL_PASS=5 "$fsck" -fy "$work/s.img" > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 32 ] && [ "$(sha256sum < "$work/s.img")" = "$sum" ]; } &&
	pass exit-cancelled || fail exit-cancelled "exit $rc (or image changed)"
"$fsck" -fp "$work/s.img" > "$work/out" 2>&1; rc=$?
{ [ $rc -eq 1 ] && grep -q 'FIXED' "$work/out"; } && pass preen-fix ||
	fail preen-fix "exit $rc: $(head -3 "$work/out")"

# ---- corruption classes: tests/fsck/NAME/{corrupt,expect.1,expect.2} ----
# A case whose directory holds a file `unrepairable` is damage that cannot
# be repaired: both runs must end with exit 4 (expect.2 is not clean).
# The sanitizer build checks one case in 2 (odd ones), the normal
# build every one: the sanitizer adds memory errors to what a case
# shows, and each case is three fsck runs and a tux3debug one.
case $(basename "$build") in *asan*) every=2 ;; *) every=1 ;; esac
k=0
for d in tests/fsck/*/; do
	[ -f "$d/corrupt" ] || continue
	k=$((k + 1))
	[ $((k % every)) -eq $((1 % every)) ] || continue
	n=$(basename "$d")
	img=$work/c.img
	if [ -f "$d/log-crc" ]; then cp "$work/base-crc.img" "$img"
	else cp "$base" "$img"; fi
	if ! sh "$d/corrupt" "$dbg" "$img" "$build" > "$work/out" 2>&1; then
		fail "case-$n" "corrupt failed: $(head -2 "$work/out")"; continue
	fi
	# a file `options` adds fsck.tux3 options to every run (e.g. -b)
	opts=
	[ -f "$d/options" ] && opts=$(cat "$d/options")
	sum=$(sha256sum < "$img")
	# shellcheck disable=SC2086
	"$fsck" -fn $opts "$img" > /dev/null 2>&1; rc=$?
	{ [ $rc -eq 4 ] && [ "$(sha256sum < "$img")" = "$sum" ]; } ||
		{ fail "case-$n" "-fn exit $rc, want 4 and no change"; continue; }
	# a file `fault` names a problem code whose first repair the first
	# -fy run makes fail (FSCK_TUX3_TEST_FAIL_REPAIR): the restart rounds
	fault=
	[ -f "$d/fault" ] && fault=$(cat "$d/fault")
	# shellcheck disable=SC2086
	{ env ${fault:+FSCK_TUX3_TEST_FAIL_REPAIR=$fault} "$fsck" -fy $opts \
		"$img" 2>&1; echo "exit $?"; } |
		sed "s#$img#test.img#g" > "$work/got.1"
	# shellcheck disable=SC2086
	{ "$fsck" -fy $opts "$img" 2>&1; echo "exit $?"; } |
		sed "s#$img#test.img#g" > "$work/got.2"
	if [ "${FSCK_TUX3_UPDATE:-0}" = 1 ]; then
		cp "$work/got.1" "$d/expect.1"; cp "$work/got.2" "$d/expect.2"
	fi
	# a repairable case ends clean; one marked unrepairable stays
	# damaged (exit 4 both times) and says why
	if [ -f "$d/unrepairable" ]; then
		last1=$(tail -1 "$work/got.1"); last2=$(tail -1 "$work/got.2")
		if [ "$last1" != "exit 4" ] || [ "$last2" != "exit 4" ]; then
			fail "case-$n" "unrepairable: runs ended '$last1', '$last2', want exit 4 twice"
			continue
		fi
	elif [ "$(tail -1 "$work/got.2")" != "exit 0" ]; then
		fail "case-$n" "second run not clean: $(tail -3 "$work/got.2" | tr '\n' ' ')"
		continue
	fi
	if ! cmp -s "$work/got.1" "$d/expect.1"; then
		fail "case-$n" "first run differs: $(diff "$d/expect.1" "$work/got.1" | head -5 | tr '\n' ' ')"
	elif ! cmp -s "$work/got.2" "$d/expect.2"; then
		fail "case-$n" "second run differs: $(diff "$d/expect.2" "$work/got.2" | head -5 | tr '\n' ' ')"
	else
		pass "case-$n"
	fi
done

# ---- a sound version table: pass 9 clean, reports its labels ----
if [ -x "$build/tests/mkvtable" ]; then
	cp "$base" "$work/v.img"
	if "$build/tests/mkvtable" "$work/v.img" ok > "$work/out" 2>&1; then
		"$fsck" -fnv "$work/v.img" > "$work/out" 2>&1; rc=$?
		if [ $rc -eq 0 ] && grep -q 'Pass 9: Checking versions' "$work/out" &&
		   grep -q 'versions: 3 labels, 0 ghosts' "$work/out"; then
			pass versions-clean
		else
			fail versions-clean "exit $rc: $(tail -3 "$work/out" | tr '\n' ' ')"
		fi
	else
		fail versions-clean "mkvtable: $(head -1 "$work/out")"
	fi
else
	skip versions-clean "$build/tests/mkvtable not built"
fi
