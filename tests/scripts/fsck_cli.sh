#!/bin/sh
# fsck.tux3 front end, against the fsck(8) contract: every exit code (0, 1,
# 2 with a read-only mount, 4, 8, 16, 32, 128), mount detection through a
# fake mountinfo (FSCK_TUX3_MOUNTINFO), the volume lock (flock(1) holding
# it shared or exclusive), -n leaving the image bit-identical, -C fd lines,
# -C 0 with and without a terminal, -p, questions on a terminal, -t, a
# real SIGTERM at a random moment, fsck(8) finding fsck.tux3 in PATH and
# make install putting it in sbin.
#   sh tests/scripts/fsck_cli.sh BUILD
set -u
build=${1:-build}
T=fsck_cli
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/time_limit.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
case $build in /*) ;; *) build=$top/$build ;; esac
fsck=$build/fsck.tux3
dbg=$build/tux3debug
mkfs=$build/mkfs.tux3
if [ ! -x "$fsck" ] || [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	skip all "$fsck, $dbg or $mkfs not built"; exit 0
fi
scratch_dir
held=$work/held
trap 'rm -f "$held"; rm -rf "$work"' EXIT INT TERM
export SOURCE_DATE_EPOCH=1700000000
unset FSCK_TUX3_MOUNTINFO FSCK_TUX3_TEST_SIGNAL_PASS \
	FSCK_TUX3_TEST_LIBRARY_VERSION

# ---- the standard tree of fsck.sh (tests/fsck/*/corrupt rely on it) ----
src=$work/src
mkdir -p "$src/d/sub"
printf 'hi\n' > "$src/a"
printf 'there\n' > "$src/d/b"
ln "$src/a" "$src/d/hard"
mkfifo "$src/fifo"
touch -d @1700000000 "$src/a" "$src/d/b" "$src/fifo" "$src/d/sub" "$src/d" "$src"
base=$work/base.img
if ! "$mkfs" -q -U 00000000-0000-0000-0000-000000000001 -d "$src" "$base" 4M \
	> "$work/out" 2>&1; then
	fail mkfs "$(head -3 "$work/out")"; exit 0
fi
# corrupt IMAGE: one preen-safe problem (a link count)
corrupt() { "$dbg" -w -R "set_inode 66 nlink 5" "$1" > /dev/null 2>&1; }
# run NAME WANT CMD...: the exit code must be WANT; output in $work/out
run() {
	n=$1 want=$2; shift 2
	"$@" > "$work/out" 2> "$work/err"; rc=$?
	[ "$rc" -eq "$want" ] && return 0
	fail "$n" "exit $rc, want $want: $(cat "$work/err" "$work/out" | head -3 | tr '\n' ' ')"
	return 1
}
# a fake mountinfo line: mountinfo FILE SOURCE OPTS [SUPEROPTS]
mountinfo() {
	src_esc=$(printf '%s' "$2" | sed 's/ /\\040/g')
	printf '%s\n' "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw" \
		"36 22 0:45 / /mnt/tux\\040ro $3 shared:7 - fuse.tux3 $src_esc ${4:-$3},user_id=0,group_id=0" \
		> "$1"
}
same() { cmp -s "$1" "$2"; }

# ---- 0 clean, 1 corrected, 4 uncorrected; -n bit-identical ----
cp "$base" "$work/c.img"
run exit-0 0 "$fsck" -fn "$work/c.img" && grep -q '^Pass 8' "$work/out" &&
	pass exit-0
corrupt "$work/c.img"
cp "$work/c.img" "$work/c0.img"
run exit-4 4 "$fsck" -fn "$work/c.img" &&
	{ same "$work/c.img" "$work/c0.img" && pass exit-4 ||
	  fail exit-4 "-n changed the image"; }
run exit-1 1 "$fsck" -fy "$work/c.img" &&
	grep -q 'FILE SYSTEM WAS MODIFIED' "$work/out" &&
	! grep -q 'REBOOT' "$work/out" &&
	run exit-1 0 "$fsck" -fn "$work/c.img" && pass exit-1

# ---- an unknown read-only feature: -n and -y say the same (exit 4), and
# -y writes nothing ----
cp "$base" "$work/ro.img"
# no secondary superblock (bytes 1024..2559) to show the bit to be damage:
# a newer tool's volume
dd if=/dev/zero of="$work/ro.img" bs=512 seek=2 count=3 conv=notrunc 2>/dev/null
if "$dbg" -w -R "set_super -c ext.ro_compat 0x100" "$work/ro.img" \
	> /dev/null 2>&1; then
	cp "$work/ro.img" "$work/ro0.img"
	run ro-features-agree 4 "$fsck" -fn "$work/ro.img" &&
		grep -q PASS1_RO_FEATURES "$work/out" &&
		run ro-features-agree 4 "$fsck" -fy "$work/ro.img" &&
		grep -q PASS1_RO_FEATURES "$work/out" &&
		same "$work/ro.img" "$work/ro0.img" && pass ro-features-agree ||
		fail ro-features-agree "the two modes disagree or -y wrote"
else
	fail ro-features-agree "cannot set ext.ro_compat"
fi

# ---- 2: repaired while mounted read-only (fake mountinfo) ----
cp "$work/c0.img" "$work/ro img"
mountinfo "$work/mi.ro" "$work/ro img" ro,relatime
if FSCK_TUX3_MOUNTINFO=$work/mi.ro run exit-2-ro-mount 3 "$fsck" -fy "$work/ro img"; then
	if ! grep -q 'REBOOT' "$work/out"; then
		fail exit-2-ro-mount "no REBOOT line"
	elif ! grep -q 'mounted read-only on /mnt/tux ro (fuse.tux3)' "$work/err"; then
		fail exit-2-ro-mount "no mount notice: $(head -2 "$work/err")"
	elif run exit-2-ro-mount 0 "$fsck" -fn "$work/ro img"; then
		pass exit-2-ro-mount
	fi
fi
# read-write per mount but read-only superblock: read-only
cp "$work/c0.img" "$work/ro img"
mountinfo "$work/mi.sro" "$work/ro img" rw,relatime ro
FSCK_TUX3_MOUNTINFO=$work/mi.sro run exit-2-ro-super 3 "$fsck" -fy "$work/ro img" &&
	pass exit-2-ro-super
# a clean volume mounted read-only: nothing written, no reboot
cp "$base" "$work/ro img"
FSCK_TUX3_MOUNTINFO=$work/mi.ro run ro-mount-clean 0 "$fsck" -fy "$work/ro img" &&
	{ same "$work/ro img" "$base" && pass ro-mount-clean ||
	  fail ro-mount-clean "image changed"; }
# -p on a read-only mount: preen-safe fixes, 1+2
cp "$work/c0.img" "$work/ro img"
FSCK_TUX3_MOUNTINFO=$work/mi.ro run ro-mount-preen 3 "$fsck" -fp "$work/ro img" &&
	pass ro-mount-preen
# exactly 2: only pending orphans released (modified, no error fixed)
if [ -n "${TUX3_ORACLE_DIR:-}" ] && [ -f "$TUX3_ORACLE_DIR/orphan.img" ]; then
	cp "$TUX3_ORACLE_DIR/orphan.img" "$work/orph.img"
	chmod u+w "$work/orph.img"
	mountinfo "$work/mi.orph" "$work/orph.img" ro
	FSCK_TUX3_MOUNTINFO=$work/mi.orph run exit-2-exact 2 "$fsck" -fy "$work/orph.img" &&
		pass exit-2-exact
else
	skip exit-2-exact "no oracle orphan volume"
fi
# another file's mount is not this one's
cp "$work/c0.img" "$work/other.img"
FSCK_TUX3_MOUNTINFO=$work/mi.ro run mount-other 1 "$fsck" -fy "$work/other.img" &&
	pass mount-other

# ---- 8: refusal on a read-write mount; -n warns and checks ----
cp "$work/c0.img" "$work/rw.img"
mountinfo "$work/mi.rw" "$work/rw.img" rw,relatime
if FSCK_TUX3_MOUNTINFO=$work/mi.rw run rw-mount-refused 8 "$fsck" -fy "$work/rw.img"; then
	if ! same "$work/rw.img" "$work/c0.img"; then
		fail rw-mount-refused "image changed"
	elif ! grep -q 'mounted read-write.*cannot repair' "$work/err"; then
		fail rw-mount-refused "message: $(head -2 "$work/err")"
	else
		pass rw-mount-refused
	fi
fi
FSCK_TUX3_MOUNTINFO=$work/mi.rw run rw-mount-preen 8 "$fsck" -fp "$work/rw.img" &&
	pass rw-mount-preen
if FSCK_TUX3_MOUNTINFO=$work/mi.rw run rw-mount-check 4 "$fsck" -fn "$work/rw.img"; then
	grep -q 'warning: .* mounted read-write.*inconsistent' "$work/err" &&
		same "$work/rw.img" "$work/c0.img" && pass rw-mount-check ||
		fail rw-mount-check "no warning, or image changed"
fi
# the same image through a symlink is the same volume
ln -s "$work/rw.img" "$work/link.img"
FSCK_TUX3_MOUNTINFO=$work/mi.rw run rw-mount-symlink 8 "$fsck" -fy "$work/link.img" &&
	pass rw-mount-symlink

# ---- 8: other operational errors ----
run exit-8-missing 8 "$fsck" -n "$work/missing.img" && pass exit-8-missing
if run exit-8-no-tty 8 "$fsck" -f "$work/c0.img" < /dev/null; then
	grep -q 'terminal' "$work/err" && pass exit-8-no-tty ||
		fail exit-8-no-tty "no message"
fi
run exit-8-bad-progress-fd 8 "$fsck" -fn -C 9 "$work/c0.img" 9>&- &&
	pass exit-8-bad-progress-fd

# ---- 16: usage ----
run exit-16-option 16 "$fsck" -Q "$base" && pass exit-16-option
run exit-16-no-device 16 "$fsck" -n && pass exit-16-no-device
run exit-16-two-devices 16 "$fsck" -n "$base" "$base" && pass exit-16-two-devices
run exit-16-n-and-y 16 "$fsck" -n -y "$base" && pass exit-16-n-and-y
run exit-16-p-and-n 16 "$fsck" -p -n "$base" && pass exit-16-p-and-n
run exit-16-C-word 16 "$fsck" -n -C abc "$base" && pass exit-16-C-word
run exit-16-C-missing 16 "$fsck" -n "$base" -C && pass exit-16-C-missing
# -C takes a descriptor: no sign, digits only, no overflow
for v in -1 +3 " 3" 3x 99999999999 -2147483648 ""; do
	n=exit-16-C-$(printf '%s' "${v:-empty}" | tr ' +' '_p')
	run "$n" 16 "$fsck" -n -C "$v" "$base" &&
		if grep -q "^fsck.tux3: -C $v: not a file descriptor" "$work/err"
		then pass "$n"
		else fail "$n" "message: $(head -1 "$work/err")"
		fi
done

# ---- 32: cancelled, nothing written ----
ok=1
for p in 1 2 3 4 5 6 7 8; do
	for sig in INT TERM; do
		cp "$work/c0.img" "$work/s.img"
		FSCK_TUX3_TEST_SIGNAL_PASS=$p:$sig "$fsck" -fy "$work/s.img" \
			> "$work/out" 2>&1; rc=$?
		if [ $rc -ne 32 ] || ! same "$work/s.img" "$work/c0.img"; then
			fail exit-32 "SIG$sig at pass $p: exit $rc (or image changed)"
			ok=0
		fi
	done
done
[ $ok = 1 ] && pass exit-32
# a real SIGTERM at moments spread over a repair: either cancelled with
# the volume as it was, or finished with it repaired
big=$work/big.img
tree=/usr/include
[ -d "$tree" ] || tree=$top/common
if "$mkfs" -q -d "$tree" "$big" 256M > "$work/out" 2>&1; then
	"$dbg" -w -R "set_inode 70 nlink 9" "$big" > /dev/null 2>&1
	cp "$big" "$work/big0.img"
	# a cancelled repair commits nothing (blocks of the uncommitted delta
	# may have been written to free space: the volume is the same)
	"$fsck" -fn "$big" 2>&1 | sed "s#$big#IMG#g" > "$work/before"
	t0=$(date +%s%N)
	"$fsck" -fy "$big" > /dev/null 2>&1
	ns=$(( $(date +%s%N) - t0 ))
	ok=1
	for f in 0 1 3 5 7 9 12; do
		cp "$work/big0.img" "$big"
		d=$(awk "BEGIN { printf \"%.4f\", $ns * $f / 10 / 1e9 }")
		"$fsck" -fy "$big" > "$work/out" 2>&1 &
		pid=$!	# (the shell execs the lone command: $! is fsck.tux3)
		sleep "$d"
		kill -TERM $pid 2>/dev/null
		wait $pid 2>/dev/null; rc=$?
		case $rc in
		32) "$fsck" -fn "$big" 2>&1 | sed "s#$big#IMG#g" > "$work/after"
		    cmp -s "$work/after" "$work/before" ||
			{ fail sigterm-async "cancelled after ${d}s but the volume changed"; ok=0; } ;;
		143) same "$big" "$work/big0.img" ||	# before main() began
			{ fail sigterm-async "killed early after ${d}s but the image changed"; ok=0; } ;;
		1) "$fsck" -fn "$big" > "$work/out" 2>&1 ||
			{ fail sigterm-async "finished after ${d}s but not clean"; ok=0; } ;;
		*) fail sigterm-async "SIGTERM after ${d}s: exit $rc"; ok=0 ;;
		esac
	done
	[ $ok = 1 ] && pass sigterm-async
else
	fail sigterm-async "mkfs: $(head -2 "$work/out")"
fi
# SIGTERM while a question waits on the terminal: cancelled, nothing done
if command -v script > /dev/null 2>&1 && command -v mkfifo > /dev/null 2>&1; then
	cp "$work/c0.img" "$work/q.img"
	mkfifo "$work/answers"
	# the writer keeps the fifo open without answering while keep exists
	: > "$work/keep"
	sh -c "exec 3> '$work/answers'; while [ -e '$work/keep' ]; do sleep 0.05; done" &
	writer=$!
	timeout 60 script -qec "sh -c 'echo \$\$ > \"$work/pid\"; exec \"$fsck\" -f \"$work/q.img\"'" \
		/dev/null < "$work/answers" > "$work/out" 2>&1 &
	scr=$!
	i=0
	while ! grep -q '<y>?' "$work/out" 2>/dev/null &&
	      [ $i -lt $(( $(time_limit 10) * 20 )) ]; do
		sleep 0.05; i=$((i + 1))
	done
	[ -s "$work/pid" ] && kill -TERM "$(cat "$work/pid")" 2>/dev/null
	wait $scr; rc=$?
	rm -f "$work/keep"; wait $writer
	"$fsck" -fn "$work/q.img" > /dev/null 2>&1; rc2=$?
	{ [ $rc -eq 32 ] && grep -q 'cancelled' "$work/out" && [ $rc2 -eq 4 ]; } &&
		pass sigterm-question ||
		fail sigterm-question "exit $rc, then -fn $rc2: $(tail -2 "$work/out" | tr '\r\n' '  ')"
else
	skip sigterm-question "no script(1)"
fi

# ---- 128: shared-library error (the version check, through its hook) ----
FSCK_TUX3_TEST_LIBRARY_VERSION=999999 run exit-128 128 "$fsck" -fn "$base" &&
	grep -q 'shared-library' "$work/err" && pass exit-128
run version 0 "$fsck" -V && grep -q '^fsck.tux3 .*interface [0-9]' "$work/out" &&
	pass version

# ---- -C fd: e2fsck's "pass current max device" ----
# a reader that is gone before the first line: the check goes on to its
# own status, saying so once (not killed by SIGPIPE)
{ sleep 0.5; "$fsck" -fn -C 3 "$base" 3>&1 > /dev/null 2> "$work/err"
  echo $? > "$work/rc"; } | true
rc=$(cat "$work/rc")
if [ "$rc" = 0 ] && [ "$(grep -c 'no more progress' "$work/err")" = 1 ] &&
   grep -q '^fsck.tux3: -C 3: Broken pipe: no more progress$' "$work/err"; then
	pass progress-fd-reader-gone
else
	fail progress-fd-reader-gone "exit $rc: $(head -2 "$work/err" | tr '\n' ' ')"
fi
if "$fsck" -fn -C 3 "$base" 3> "$work/prog" > /dev/null 2>&1; then
	bad=$(grep -Ev "^[1-9] [0-9]+ [0-9]+ $base\$" "$work/prog" | head -1)
	order=$(awk '{ if ($1 < last || $2 > $3) { print NR": "$0; exit } last = $1 }' "$work/prog")
	if [ ! -s "$work/prog" ]; then
		fail progress-fd "no lines"
	elif [ -n "$bad" ]; then
		fail progress-fd "bad line: $bad"
	elif [ -n "$order" ]; then
		fail progress-fd "out of order or past max: $order"
	else
		pass progress-fd
	fi
else
	fail progress-fd "exit $?"
fi
# -C 0 without a terminal: exactly the output without -C
"$fsck" -fn "$base" > "$work/plain" 2>&1
if run progress-bar-no-tty 0 "$fsck" -fn -C 0 "$base"; then
	if grep -q "$(printf '\r')" "$work/out"; then
		fail progress-bar-no-tty "carriage returns in the output"
	elif ! cmp -s "$work/out" "$work/plain"; then
		fail progress-bar-no-tty "output differs from without -C"
	else
		pass progress-bar-no-tty
	fi
fi
# -C 0 on a terminal (script(1) gives a pty): a bar, redrawn, cleared,
# out of the way of the problem found (big0.img has one link count wrong)
if command -v script > /dev/null 2>&1 && [ -f "$work/big0.img" ]; then
	timeout 60 script -qec "'$fsck' -fn -C 0 '$work/big0.img'" /dev/null \
		< /dev/null > "$work/tty" 2>&1; rc=$?
	if [ $rc -ne 4 ]; then
		fail progress-bar-tty "exit $rc, want 4"
	elif ! tr '\r' '\n' < "$work/tty" | grep -q '^inode 70: link count'; then
		fail progress-bar-tty "the problem is not on a line of its own"
	elif ! grep -q ": |=*  *| *[0-9.]*%" "$work/tty"; then
		fail progress-bar-tty "no bar: $(head -c 300 "$work/tty" | cat -v)"
	elif ! tail -1 "$work/tty" | tr '\r' '\n' | grep -q "^$work/big0.img: [0-9]* files"; then
		fail progress-bar-tty "the summary does not follow a cleared bar"
	else
		pass progress-bar-tty
	fi
else
	skip progress-bar-tty "no script(1), or no image"
fi

# ---- -p ----
run preen-clean 0 "$fsck" -fp "$base" &&
	{ ! grep -q '^Pass' "$work/out" && pass preen-clean ||
	  fail preen-clean "pass headers under -p"; }
cp "$work/c0.img" "$work/p.img"
run preen-fix 1 "$fsck" -fp "$work/p.img" &&
	grep -q "^$work/p.img: .*FIXED" "$work/out" && pass preen-fix
# a problem preen may not fix: stop, write nothing, exit 4 (the root
# entry "a", block 66 offset 0, pointed at directory 67, d/sub: that
# directory under two names)
cp "$base" "$work/p.img"
"$dbg" -w -R "set_block 66 7 43" "$work/p.img" > /dev/null 2>&1
cp "$work/p.img" "$work/p0.img"
"$fsck" -fn "$work/p.img" > "$work/out" 2>&1
sed "s#$work/p.img#IMG#g" "$work/out" > "$work/before"
if ! grep -q PASS5_DIR_TWICE "$work/out"; then
	fail preen-unexpected "setup: no PASS5_DIR_TWICE (layout changed?)"
elif run preen-unexpected 4 "$fsck" -fp "$work/p.img"; then
	"$fsck" -fn "$work/p.img" 2>&1 | sed "s#$work/p.img#IMG#g" > "$work/after"
	if ! grep -q 'UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY' "$work/out"; then
		fail preen-unexpected "no UNEXPECTED INCONSISTENCY"
	elif ! cmp -s "$work/before" "$work/after"; then
		fail preen-unexpected "the volume changed (something was committed)"
	else
		pass preen-unexpected
	fi
fi
cp "$work/c0.img" "$work/p.img"
run preen-a 1 "$fsck" -fa "$work/p.img" && pass preen-a

# ---- questions on a terminal ----
if command -v script > /dev/null 2>&1; then
	cp "$work/c0.img" "$work/q.img"
	printf 'y\n' | timeout 60 script -qec "'$fsck' -f '$work/q.img'" /dev/null \
		> "$work/out" 2>&1; rc=$?
	{ [ $rc -eq 1 ] && grep -q 'set the link count<y>?' "$work/out" &&
	  "$fsck" -fn "$work/q.img" > /dev/null 2>&1; } &&
		pass ask-yes || fail ask-yes "exit $rc: $(tail -2 "$work/out")"
	cp "$work/c0.img" "$work/q.img"
	printf 'n\n' | timeout 60 script -qec "'$fsck' -f '$work/q.img'" /dev/null \
		> "$work/out" 2>&1; rc=$?
	{ [ $rc -eq 4 ] && same "$work/q.img" "$work/c0.img"; } &&
		pass ask-no || fail ask-no "exit $rc (or image changed)"
else
	skip ask "no script(1)"
fi

# ---- -t: time, peak memory, inodes loaded and device reads per pass ----
if run timing 0 "$fsck" -fnt "$base"; then
	n=$(grep -c '^Pass [1-9]: time [0-9.]* s, peak memory [0-9]* KiB (+[0-9]* KiB), [0-9]* inodes loaded, [0-9]* device reads$' "$work/out")
	grep -q '^Inode state: [0-9]* KiB$' "$work/out" || n=0
	h=$(grep -c '^Pass [1-9]: [^t]' "$work/out")
	{ [ "$n" -ge 8 ] && [ "$n" -eq "$h" ] &&
	  grep -q '^Total: time [0-9.]* s, peak memory [0-9]* KiB$' "$work/out"; } &&
		pass timing || fail timing "$n timing lines for $h passes"
fi

# ---- the volume lock ----
# hold LOCK THE-IMAGE: a process keeps flock(LOCK) until $held goes
hold() {
	: > "$held"
	flock "$1" "$2" sh -c "while [ -e '$held' ]; do sleep 0.05; done" &
	holder=$!
	i=0	# until the lock is seen taken
	while flock -n "$3" "$2" true 2>/dev/null &&
	      [ $i -lt $(( $(time_limit 5) * 20 )) ]; do
		sleep 0.05; i=$((i + 1))
	done
}
release() { rm -f "$held"; wait $holder 2>/dev/null; }
if command -v flock > /dev/null 2>&1; then
	cp "$work/c0.img" "$work/l.img"
	hold -x "$work/l.img" -s
	run lock-exclusive-repair 8 "$fsck" -fy "$work/l.img" &&
		grep -q 'in use read-write' "$work/err" &&
		pass lock-exclusive-repair
	run lock-exclusive-preen 8 "$fsck" -fp "$work/l.img" &&
		pass lock-exclusive-preen
	run lock-exclusive-check 8 "$fsck" -fn "$work/l.img" &&
		pass lock-exclusive-check
	release
	same "$work/l.img" "$work/c0.img" && pass lock-exclusive-unchanged ||
		fail lock-exclusive-unchanged "image changed"
	# a reader (shared lock): checked as usual, repaired under it (+2)
	hold -s "$work/l.img" -x
	run lock-shared-check 4 "$fsck" -fn "$work/l.img" && pass lock-shared-check
	if run lock-shared-repair 3 "$fsck" -fy "$work/l.img"; then
		grep -q 'open read-only by another process' "$work/err" &&
			pass lock-shared-repair ||
			fail lock-shared-repair "no notice: $(head -2 "$work/err")"
	fi
	release
	run lock-shared-after 0 "$fsck" -fn "$work/l.img" && pass lock-shared-after
else
	skip lock "no flock(1)"
fi

# ---- fsck(8) runs fsck.tux3 from PATH ----
if command -v fsck > /dev/null 2>&1; then
	PATH=$build:$PATH fsck -N -t tux3 -n "$base" > "$work/out" 2>&1
	if ! grep -q "$build/fsck.tux3" "$work/out"; then
		skip fsck8 "fsck(8) would not run $build/fsck.tux3: $(tail -1 "$work/out")"
	else
		PATH=$build:$PATH fsck -t tux3 -n "$base" > "$work/out" 2>&1; rc=$?
		cp "$work/c0.img" "$work/f.img"
		PATH=$build:$PATH fsck -t tux3 -fn "$work/f.img" > "$work/out2" 2>&1; rc2=$?
		PATH=$build:$PATH fsck -t tux3 -fy "$work/f.img" > "$work/out2" 2>&1; rc3=$?
		{ [ $rc -eq 0 ] && [ $rc2 -eq 4 ] && [ $rc3 -eq 1 ]; } && pass fsck8 ||
			fail fsck8 "exits $rc $rc2 $rc3, want 0 4 1"
	fi
else
	skip fsck8 "no fsck(8)"
fi

# ---- make install puts fsck.tux3 and its man page in place ----
if command -v make > /dev/null 2>&1; then
	(cd "$top" && make -n install BUILD="${1:-build}" PREFIX=/usr \
		DESTDIR="$work/inst") > "$work/out" 2>&1
	{ grep -q "install -m 755 .*/inst/fsck.tux3 .*$work/inst/usr/sbin/\$" "$work/out" &&
	  grep -q "install -m 644 .*doc/fsck.tux3.8 .*$work/inst/usr/share/man/man8/\$" "$work/out" &&
	  [ -f "$top/doc/fsck.tux3.8" ]; } && pass install ||
		fail install "$(grep fsck "$work/out" | head -2)"
else
	skip install "no make"
fi
