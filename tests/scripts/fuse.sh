#!/bin/sh
# tux3fuse through the kernel:   sh tests/scripts/fuse.sh BUILD
#   fuse/include/...    cp -a /usr/include in (the default loop), the
#                       daemon exits 0 at unmount, fsck.tux3 -fn clean, a
#                       read-only remount diffs identical and refuses writes,
#                       the image is bit-identical after it (sha256),
#                       tux3debug rdump diffs identical
#   fuse/parallel/...   dd writers and cp -a at once (several threads),
#                       every file compared, fsck clean
#   fuse/ns/...         renames across directories, over a name,
#                       RENAME_NOREPLACE and RENAME_EXCHANGE (renameat2
#                       through python3 ctypes), "..", hard links, a
#                       symlink longer than a block (1 KiB blocks),
#                       truncate, st_blocks of a sparse file, mknod, rmdir of
#                       a non-empty directory, large directories through
#                       readdir, xattrs (setfattr/getfattr, XATTR_CREATE and
#                       XATTR_REPLACE), an ACL of base entries stored as
#                       the mode, chmod/chown/utimes, an unlinked open
#                       file keeping its space until the last close,
#                       allow_other with default_permissions (modes hold
#                       for another user), fsck clean
#   fuse/daemon/...     the default daemon mode: mount, write, access(2)
#                       answered by the driver, unmount, committed (fsck
#                       clean, the file there)
#   fuse/sigterm/...    SIGTERM ends the daemon (-s: the single-threaded
#                       loop) with status 0, unmounted and committed
#   fuse/loop/...       spin=0,cache=0 and cache=1 (smaller than the tree)
#                       mounts copy and read back /usr/include/linux;
#                       SIGTERM on the default loop exits 0, committed;
#                       clone_fd refused
#   fuse/commit/...     commit=1 commits by itself (a SIGKILL later keeps
#                       the file), fsync commits, commit=0 without fsync
#                       loses an uncommitted file at a SIGKILL, and replay
#                       leaves a clean volume
#   fuse/snapshot/...   snapshot=TAG shows the snapshot's state, is
#                       writable, and the live version does not see that
#   fuse/snapdir/...    -o snapdir: /.snapshots/TAG reads as tux3debug's
#                       rdump of TAG (xattrs too), hidden from ls -a / unless
#                       snapdir=visible, inode numbers stable in a version
#                       and distinct across, every change refused with
#                       EROFS, reads through a strictatime mount set no
#                       atime in a snapshot, a read-write snapshot mount
#                       refused
#   fuse/mount/...      mount.tux3 directly (fsname, type fuse.tux3,
#                       options dropped, -f fakes) and mount -t tux3 (with
#                       a temporary /sbin/mount.tux3 when there is none)
#   fuse/sanitizer      no sanitizer report in the foreground daemons' output
#   fuse/options/...    commit=, spin=, cache=, cpu_latency= with a sign,
#                       letters, no digits or too large: exit 1 naming the
#                       option, before any mount (run without FUSE too);
#                       the limits themselves accepted
# Skips (SKIP lines) where /dev/fuse is missing or FUSE cannot mount here;
# a mount failing for any other reason fails.  FUSE_FULL=1 (make fuse)
# runs the larger sizes.
set -u
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/fuse_mount.sh"
build=${1:-build}
T=fuse
fuse=$build/tux3fuse
helper=$build/mount.tux3
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
dbg=$build/tux3debug
full=${FUSE_FULL:-0}

# ---- numeric options: parsed strictly before anything is opened ----
# (no FUSE needed: a refused option exits 1 naming it, an accepted one
# goes on to the missing device)
if [ -x "$fuse" ]; then
	for o in commit=-1 commit=4294967296 commit=99999999999999999999 \
		 commit=5x commit= commit=0x10 spin=-5 spin=+5 cache=1e3 \
		 cache=18446744073709551616 cpu_latency=-1 \
		 cpu_latency=2000000001; do
		out=$("$fuse" -o "$o" /nonexistent/t.img /nonexistent/m 2>&1)
		rc=$?
		if [ $rc = 1 ] && printf '%s\n' "$out" | grep -q "^tux3fuse: $o: "
		then
			pass "options/$o"
		else
			fail "options/$o" "exit $rc: $(printf '%s' "$out" | head -1)"
		fi
	done
	for o in commit=0 commit=4294967295 spin=0 cache=0 cpu_latency=0 \
		 cpu_latency=2000000000; do
		out=$("$fuse" -o "$o" /nonexistent/t.img /nonexistent/m 2>&1)
		rc=$?
		if [ $rc = 1 ] && [ "$out" = \
		     "tux3fuse: /nonexistent/t.img: No such file or directory" ]
		then
			pass "options/$o"
		else
			fail "options/$o" "exit $rc: $(printf '%s' "$out" | head -1)"
		fi
	done
fi

fuse_ready "$fuse" "$helper" "$mkfs" "$fsck" "$dbg"

scratch_dir
# the mount point where another user can reach it (fuse/ns/other-user)
mnt=$(mktemp -d /tmp/tux3fuse-mnt.XXXXXX) || { fail all "mktemp"; exit 1; }
chmod 755 "$mnt"
log=$work/daemon.log
dpid=
cleanup() {
	if grep -q " $mnt " /proc/self/mountinfo 2>/dev/null; then
		umount "$mnt" 2>/dev/null || fusermount3 -u "$mnt" 2>/dev/null
	fi
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	[ -n "${sbin_helper:-}" ] && cmp -s "$helper" /sbin/mount.tux3 &&
		rm -f /sbin/mount.tux3
	rmdir "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# stop: unmount $mnt and wait for the daemon; its exit status
stop() {
	unmount_retry "$mnt" "$log"
	rc=0
	wait_daemon "$dpid" || rc=$?
	dpid=
	return $rc
}

# check NAME IMG: fsck.tux3 -fn clean
check() {
	if out=$("$fsck" -fn "$2" 2>&1); then
		pass "$1"
	else
		fail "$1" "fsck -fn: $(printf '%s' "$out" | grep -v '^Pass' |
			head -3 | tr '\n' ' ')"
	fi
}

# result NAME CONDITION...: pass if the command succeeds
result() {
	name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name"; fi
}

# ---- can FUSE mount here at all? ----
fuse_probe
result probe/stop stop
rm -f "$img"

# ---- /usr/include in, read back read-only, rdump ----
img=$work/inc.img
"$mkfs" -q "$img" 1g
src=/usr/include
if start "$img"; then
	result include/copy cp -a "$src" "$mnt/tree"
	result include/diff-rw diff -r --no-dereference "$src" "$mnt/tree"
	result include/stop stop
	check include/fsck "$img"
	sum=$(sha256sum < "$img")
	if start "$img" -o ro; then
		result include/diff-ro \
			diff -r --no-dereference "$src" "$mnt/tree"
		if touch "$mnt/new" 2>/dev/null || mkdir "$mnt/d" 2>/dev/null
		then fail include/ro-refuses
		else pass include/ro-refuses
		fi
		result include/ro-stop stop
	else
		fail include/ro-mount "$(tail -1 "$log")"
	fi
	result include/ro-unchanged test "$sum" = "$(sha256sum < "$img")"
	rm -rf "$work/rdump"
	if "$dbg" -R "rdump / $work/rdump" "$img" > /dev/null 2>&1 &&
	   diff -r --no-dereference "$src" "$work/rdump/tree"; then
		pass include/rdump
	else
		fail include/rdump
	fi
	rm -rf "$work/rdump"
else
	fail include/mount "$(tail -1 "$log")"
fi
rm -f "$img"

# ---- several writers at once: 64 KiB writes are handed to other threads ----
img=$work/par.img
n=4 mb=8
[ "$full" = 1 ] && n=8 mb=64
# the writers' data and two copies of /usr/include/linux, with room
"$mkfs" -q "$img" $((n * mb + 256))m
mkdir -p "$work/src"
i=0
while [ $i -lt $n ]; do
	head -c $((mb * 1048576)) /dev/urandom > "$work/src/f$i"
	i=$((i + 1))
done
if start "$img"; then
	i=0 pids=
	while [ $i -lt $n ]; do
		dd if="$work/src/f$i" of="$mnt/f$i" bs=64k 2>/dev/null &
		pids="$pids $!"
		i=$((i + 1))
	done
	cp -a /usr/include/linux "$mnt/t1" & pids="$pids $!"
	cp -a /usr/include/linux "$mnt/t2" & pids="$pids $!"
	bad=0
	for p in $pids; do wait "$p" || bad=1; done
	result parallel/writers test $bad = 0
	i=0 bad=0
	while [ $i -lt $n ]; do
		cmp -s "$work/src/f$i" "$mnt/f$i" || bad=1
		i=$((i + 1))
	done
	diff -r /usr/include/linux "$mnt/t1" > /dev/null || bad=1
	diff -r /usr/include/linux "$mnt/t2" > /dev/null || bad=1
	result parallel/compare test $bad = 0
	result parallel/stop stop
	check parallel/fsck "$img"
else
	fail parallel/mount "$(tail -1 "$log")"
fi
rm -rf "$img" "$work/src"

# ---- the namespace, attributes and xattrs (1 KiB blocks) ----
img=$work/ns.img
"$mkfs" -q -b 1024 "$img" 64m
py=
command -v python3 >/dev/null 2>&1 && python3 -c 'import ctypes' 2>/dev/null &&
	py=python3
# renameat2 OLD NEW FLAGS: prints the errno name, or OK
renameat2() {
	$py - "$1" "$2" "$3" <<'EOF'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(),
                   int(sys.argv[3]))
print("OK" if r == 0 else errno.errorcode[ctypes.get_errno()])
EOF
}
if start "$img" -o allow_other; then
	m=$mnt
	# allow_other brings default_permissions
	result ns/default-permissions grep -q \
		" $mnt .*fuse.tux3 .*default_permissions" /proc/self/mountinfo
	mkdir "$m/a" "$m/b" && echo one > "$m/a/f" && mv "$m/a/f" "$m/b/g"
	result ns/rename-across test ! -e "$m/a/f" -a "$(cat "$m/b/g")" = one
	mkdir "$m/a/sub" && echo in > "$m/a/sub/x" && mv "$m/a/sub" "$m/b/"
	# ".." as readdir gives it follows the rename
	dotdot=$(ls -fai "$m/b/sub" | awk '$2 == ".." { print $1 }')
	result ns/rename-dir test "$(cat "$m/b/sub/x")" = in -a \
		"$(stat -c %i "$m/b/sub/..")" = "$(stat -c %i "$m/b")" -a \
		"$dotdot" = "$(stat -c %i "$m/b")" -a \
		"$(stat -c %h "$m/a")" = 2 -a "$(stat -c %h "$m/b")" = 3
	echo two > "$m/a/r" && mv "$m/a/r" "$m/b/g"
	result ns/rename-replace test "$(cat "$m/b/g")" = two -a ! -e "$m/a/r"
	if [ -n "$py" ]; then
		echo p > "$m/a/p" && echo q > "$m/b/q"
		result ns/rename-noreplace test \
			"$(renameat2 "$m/a/p" "$m/b/q" 1)" = EEXIST -a \
			"$(cat "$m/a/p")" = p
		result ns/rename-exchange test \
			"$(renameat2 "$m/a/p" "$m/b/q" 2)" = OK -a \
			"$(cat "$m/a/p")" = q -a "$(cat "$m/b/q")" = p
		mkdir "$m/a/dx"
		result ns/rename-exchange-dir test \
			"$(renameat2 "$m/a/dx" "$m/b/q" 2)" = OK -a \
			-d "$m/b/q" -a "$(cat "$m/a/dx")" = p
		# what it saw is kept when it fails (it failed once in a
		# make check on the sanitizer build and not in the reruns)
		got=$(renameat2 "$m/a/dx" "$m/b/new" 1)
		if [ "$got" = OK ] && [ -f "$m/b/new" ] && [ ! -e "$m/a/dx" ]
		then
			pass ns/rename-noreplace-new
		else
			fail ns/rename-noreplace-new "renameat2: $got; b/new:\
 $(stat -c %F "$m/b/new" 2>&1); a/dx: $(stat -c %F "$m/a/dx" 2>&1)"
		fi
	else
		skip ns/rename-flags "no python3 with ctypes for renameat2"
	fi
	ln "$m/b/g" "$m/a/h1" && ln "$m/b/g" "$m/h2"
	result ns/link test "$(stat -c %h "$m/b/g")" = 3 -a \
		"$(stat -c %i "$m/h2")" = "$(stat -c %i "$m/b/g")"
	rm "$m/b/g"
	result ns/unlink-link test "$(stat -c %h "$m/h2")" = 2 -a \
		"$(cat "$m/a/h1")" = two
	long=$(printf 'x/%.0s' $(seq 1 1500))end
	ln -s "$long" "$m/long"
	result ns/long-symlink test "$(readlink "$m/long")" = "$long" -a \
		"$(stat -c %s "$m/long")" = ${#long}
	head -c 5000 /dev/urandom > "$m/t" && cp "$m/t" "$work/t"
	truncate -s 3000 "$m/t" && truncate -s 3000 "$work/t" &&
	truncate -s 9000 "$m/t" && truncate -s 9000 "$work/t"
	result ns/truncate cmp "$m/t" "$work/t"
	dd if=/dev/zero of="$m/sparse" bs=1k seek=10240 count=64 \
		2>/dev/null
	result ns/st_blocks test "$(stat -c %b "$m/sparse")" = 128 -a \
		"$(stat -c %s "$m/sparse")" = $((10304 * 1024))
	mkfifo "$m/fifo" && mknod "$m/null" c 1 3
	result ns/mknod test -p "$m/fifo" -a -c "$m/null" -a \
		"$(stat -c %t:%T "$m/null")" = 1:3
	if rmdir "$m/b" 2>/dev/null; then fail ns/rmdir-notempty
	else pass ns/rmdir-notempty
	fi
	mkdir "$m/big"
	(cd "$m/big" && seq 1 1500 | sed 's/^/a-rather-long-file-name-/' |
		xargs touch)
	result ns/readdir test "$(ls -f "$m/big" | wc -l)" = 1502 -a \
		"$(ls -f "$m/big" | sort | head -2 | tr '\n' ' ')" = ". .. "
	result ns/readdirplus test "$(ls -l "$m/big" | grep -c '^-')" = 1500
	rm -r "$m/big"
	result ns/rm-r test ! -e "$m/big"
	# (chown clears set-user-ID: chmod after it)
	echo mode > "$m/c" && chown 12:34 "$m/c" && chmod 4751 "$m/c" &&
		touch -m -d @1234567890.5 "$m/c"
	result ns/chmod-chown-utimes test \
		"$(stat -c %a:%u:%g:%Y "$m/c")" = 4751:12:34:1234567890
	if command -v setfattr >/dev/null 2>&1; then
		setfattr -n user.one -v 1 "$m/c" &&
		setfattr -n user.two -v 22 "$m/c" &&
		setfattr -x user.one "$m/c"
		result ns/xattr test "$(getfattr --only-values -n user.two \
			"$m/c" 2>/dev/null)" = 22 -a "$(getfattr -d -m - \
			"$m/c" 2>/dev/null | grep -c '^user\.')" = 1
	else
		skip ns/xattr "no setfattr (attr)"
	fi
	if [ -n "$py" ]; then
		result ns/xattr-flags test "$(python3 - "$m/c" <<'EOF'
import errno, os, sys
p = sys.argv[1]
out = []
for name, flags in (("user.two", os.XATTR_CREATE),
                    ("user.nope", os.XATTR_REPLACE),
                    ("user.two", os.XATTR_REPLACE)):
    try:
        os.setxattr(p, name, b"v", flags)
        out.append("OK")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
out.append(os.getxattr(p, "user.two").decode())
print(" ".join(out))
EOF
)" = "EEXIST ENODATA OK v"
	fi
	# an unlinked file keeps its space while open, and gives it back
	# at the kernel's last forget; the earlier cases' deferred frees are
	# settled first (an fsync of the root commits), so that no commit
	# of the timer hands them back between the samples
	sync "$m" 2>/dev/null
	free0=$(stat -f -c %f "$m")
	head -c 4194304 /dev/zero > "$m/held"	# 4096 blocks
	free1=$(stat -f -c %f "$m")
	exec 3< "$m/held"
	rm "$m/held"
	free2=$(stat -f -c %f "$m")
	n3=$(head -c 4194304 <&3 | wc -c)
	exec 3<&-
	i=0
	while [ $(($(stat -f -c %f "$m") - free2)) -lt 4000 ] &&
	      [ $i -lt $(( $(time_limit 5) * 10 )) ]
	do
		sleep 0.1
		i=$((i + 1))
	done
	# (4096 data blocks back, less what the delta's metadata takes)
	free3=$(stat -f -c %f "$m")
	if [ $((free0 - free1)) -ge 4096 ] && [ "$free2" -le "$free1" ] &&
	   [ "$n3" = 4194304 ] && [ $((free3 - free2)) -ge 4000 ]; then
		pass ns/unlinked-open
	else
		fail ns/unlinked-open "free blocks $free0, written $free1,\
 unlinked $free2, closed $free3; read $n3 bytes"
	fi
	# an access ACL of the base entries only is the mode (as on ext4):
	# no xattr stays; one with a named user is kept as it was given
	touch "$m/acl"
	chmod 600 "$m/acl"
	result ns/acl-as-mode test "$(python3 - "$m/acl" <<'EOF' 2>&1
import errno, os, struct, sys
p = sys.argv[1]
def acl(*ents):
    return struct.pack("<I", 2) + b"".join(
        struct.pack("<HHI", tag, perm, uid) for tag, perm, uid in ents)
ANY = 0xffffffff
os.setxattr(p, "system.posix_acl_access",
            acl((1, 7, ANY), (4, 5, ANY), (0x20, 4, ANY)))
out = [oct(os.stat(p).st_mode & 0o7777), str(os.listxattr(p))]
try:
    os.getxattr(p, "system.posix_acl_access")
    out.append("stored")
except OSError as e:
    out.append(errno.errorcode[e.errno])
named = acl((1, 6, ANY), (2, 4, 65534), (4, 4, ANY), (0x10, 4, ANY),
            (0x20, 0, ANY))
os.setxattr(p, "system.posix_acl_access", named)
out.append(str(os.getxattr(p, "system.posix_acl_access") == named))
os.setxattr(p, "system.posix_acl_access",
            acl((1, 6, ANY), (4, 0, ANY), (0x20, 0, ANY)))
out.append(oct(os.stat(p).st_mode & 0o7777))
out.append(str(os.listxattr(p)))
print(" ".join(out))
EOF
)" = "0o754 [] ENODATA True 0o600 []"
	if command -v setpriv >/dev/null 2>&1; then
		echo secret > "$m/secret" && chmod 600 "$m/secret"
		echo open > "$m/open" && chmod 644 "$m/open"
		chmod 755 "$m"
		as() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
		if ! as cat "$m/secret" >/dev/null 2>&1 &&
		   [ "$(as cat "$m/open")" = open ] &&
		   ! as sh -c "echo x > '$m/open'" 2>/dev/null &&
		   ! as touch "$m/new" 2>/dev/null; then
			pass ns/other-user
		else
			fail ns/other-user
		fi
	else
		skip ns/other-user "no setpriv"
	fi
	result ns/stop stop
	check ns/fsck "$img"
else
	fail ns/mount "$(tail -1 "$log")"
fi
rm -f "$img"

# ---- daemon mode ----
img=$work/d.img
"$mkfs" -q "$img" 32m
if "$fuse" "$img" "$mnt" 2>> "$log" && mounted "$mnt"; then
	pass daemon/mount
	echo daemon > "$mnt/f"
	# access(2) without default_permissions: the driver's own check
	result daemon/access test -w "$mnt/f" -a ! -x "$mnt/f" -a -x "$mnt"
	unmount_retry "$mnt" "$log"
	result daemon/exit wait_free "$img"
	check daemon/fsck "$img"
	result daemon/committed test \
		"$("$dbg" -R "cat /f" "$img" 2>/dev/null)" = daemon
else
	fail daemon/mount "$(tail -1 "$log")"
fi
rm -f "$img"

# ---- SIGTERM: a clean exit that commits ----
# sigterm_stop NAME: SIGTERM the daemon of $img; it exits 0, unmounted,
# and leaves a clean volume
sigterm_stop() {
	kill -TERM "$dpid"
	rc=0
	wait_daemon "$dpid" || rc=$?
	dpid=
	result "$1/exit" test $rc = 0
	result "$1/unmounted" wait_free "$img"
	mounted "$mnt" && unmount_retry "$mnt" "$log"
	check "$1/fsck" "$img"
}
img=$work/s.img
"$mkfs" -q "$img" 32m
if start "$img" -s -o commit=0; then	# (one thread)
	echo term > "$mnt/f"
	sigterm_stop sigterm
	result sigterm/committed test \
		"$("$dbg" -R "cat /f" "$img" 2>/dev/null)" = term
else
	fail sigterm/mount "$(tail -1 "$log")"
fi
rm -f "$img"

# ---- the request loop: its options, and SIGTERM on the default loop ----
img=$work/l.img
"$mkfs" -q "$img" 64m
if start "$img" -o spin=0,cache=0,max_threads=2; then
	cp -a /usr/include/linux "$mnt/" 2>/dev/null
	result loop/no-spin-no-cache diff -r /usr/include/linux "$mnt/linux"
	result loop/stop stop
	check loop/fsck "$img"
else
	fail loop/mount "$(tail -1 "$log")"
fi
if start "$img" -o cache=1; then	# a cache far smaller than the tree
	result loop/small-cache diff -r /usr/include/linux "$mnt/linux"
	sigterm_stop loop/sigterm
else
	fail loop/small-cache "$(tail -1 "$log")"
fi
# clone_fd is refused (one device descriptor serves every thread)
if "$fuse" -f -o clone_fd "$img" "$mnt" > "$work/clone.out" 2>&1; then
	fail loop/clone-fd-refused "it mounted"
	mounted "$mnt" && unmount_retry "$mnt" "$log"
else
	result loop/clone-fd-refused grep -q "clone_fd is not supported" \
		"$work/clone.out"
fi

# -o cpu_latency=US: the PM QoS request is US while requests arrive and
# is given back when they stop (reading /dev/cpu_dma_latency gives the
# value in force, the least of all requests)
qos=/dev/cpu_dma_latency
rt=$build/tests/fuse_roundtrip
qos_now() { od -An -td4 -N4 "$qos" 2>/dev/null | tr -d ' '; }
qos_is() { seen=$(qos_now); [ "$seen" = "$1" ]; }
base=$(qos_now)
if [ ! -x "$rt" ] || [ -z "$base" ]; then
	skip loop/cpu-latency "$qos cannot be read here"
elif [ "$base" -le 7 ]; then
	skip loop/cpu-latency "another request already holds $base us"
elif start "$img" -o cpu_latency=7; then
	touch "$mnt/f"
	"$rt" "$mnt/f" 10000000 > /dev/null &	# getxattr after getxattr
	rtpid=$!
	# poll rather than sample once: on a loaded machine the first
	# requests may come late; seen= is the last value read
	if wait_for 10 qos_is 7; then
		pass loop/cpu-latency-held-while-busy
	else
		fail loop/cpu-latency-held-while-busy \
			"PM QoS $seen us (base $base) for $(time_limit 10) s, never 7"
	fi
	echo "cpu-latency: $seen us while busy (base $base)"
	kill "$rtpid"
	wait "$rtpid" 2>/dev/null
	# quiet for far longer than the 10 ms the daemon waits
	if wait_for 10 qos_is "$base"; then
		pass loop/cpu-latency-released-when-quiet
	else
		fail loop/cpu-latency-released-when-quiet \
			"PM QoS $seen us for $(time_limit 10) s after the requests, not $base"
	fi
	echo "cpu-latency: $seen us when quiet"
	result loop/cpu-latency-stop stop
	result loop/cpu-latency-closed-at-exit test "$(qos_now)" = "$base"
else
	fail loop/cpu-latency "$(tail -1 "$log")"
fi
if "$fuse" -f -o cpu_latency=3000000000 "$img" "$mnt" > "$work/lat.out" 2>&1
then
	fail loop/cpu-latency-too-large-refused "it mounted"
	mounted "$mnt" && unmount_retry "$mnt" "$log"
else
	result loop/cpu-latency-too-large-refused \
		grep -q "cpu_latency=3000000000: more than" "$work/lat.out"
fi
rm -f "$img"

# ---- when deltas commit: the timer, fsync, nothing (SIGKILL after) ----
# kill9 NAME: SIGKILL the daemon, unmount the dead mount, wait for the lock
kill9() {
	kill -KILL "$dpid"
	wait "$dpid" 2>/dev/null
	dpid=
	umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
	wait_free "$img"
}
img=$work/c.img
"$mkfs" -q "$img" 32m
# sb_sum IMG: the superblock's bytes, which every commit rewrites
sb_sum() { dd if="$1" bs=4096 skip=1 count=1 2>/dev/null | cksum; }
# sb_changed IMG SUM: the superblock is no longer SUM
sb_changed() { [ "$(sb_sum "$1")" != "$2" ]; }
if start "$img" -o commit=1; then
	sum=$(sb_sum "$img")
	echo timer > "$mnt/f"
	# the timer's commit, a second after the change: waited for by the
	# superblock it writes (a bound, not a sleep, for a loaded machine)
	result commit/timer-wrote wait_for 20 sb_changed "$img" "$sum"
	kill9
	check commit/timer-fsck "$img"
	result commit/timer test \
		"$("$dbg" -R "cat /f" "$img" 2>/dev/null)" = timer
fi
if start "$img" -o commit=0; then
	echo synced > "$mnt/g"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' \
		"$mnt/g" 2>/dev/null || sync "$mnt/g"
	echo lost > "$mnt/h"
	kill9
	check commit/fsync-fsck "$img"
	result commit/fsync test \
		"$("$dbg" -R "cat /g" "$img" 2>/dev/null)" = synced
	if "$dbg" -R "stat /h" "$img" > /dev/null 2>&1; then
		fail commit/uncommitted-lost
	else
		pass commit/uncommitted-lost
	fi
else
	fail commit/mount "$(tail -1 "$log")"
fi
rm -f "$img"

# ---- snapshot=TAG ----
img=$work/v.img
"$mkfs" -q "$img" 64m
if start "$img"; then
	echo one > "$mnt/f"
	stop
	if "$dbg" -w -R "snapshot create s1" "$img" > /dev/null 2>&1; then
		start "$img" && echo two > "$mnt/f" && echo new > "$mnt/g"
		stop
		if start "$img" -o snapshot=s1; then
			result snapshot/content test "$(cat "$mnt/f")" = one \
				-a ! -e "$mnt/g"
			echo h > "$mnt/h"
			result snapshot/writable test "$(cat "$mnt/h")" = h
			result snapshot/stop stop
		else
			fail snapshot/mount "$(tail -1 "$log")"
		fi
		if start "$img" -o ro; then
			result snapshot/live test "$(cat "$mnt/f")" = two -a \
				-e "$mnt/g" -a ! -e "$mnt/h"
			stop
		fi
		check snapshot/fsck "$img"
		if "$fuse" -f -o snapshot=nosuch "$img" "$mnt" \
			> "$work/err" 2>&1; then
			fail snapshot/unknown
			mounted "$mnt" && unmount_retry "$mnt" "$log"
		else
			result snapshot/unknown grep -q "no snapshot" "$work/err"
		fi
	else
		fail snapshot/create "tux3debug snapshot create"
	fi
else
	fail snapshot/mount "$(tail -1 "$log")"
fi
rm -f "$img"

# ---- snapdir: every snapshot under /.snapshots ----
# snap_state DIR TAG: DIR as it stands at each snapshot: a tree with a
# hard link, a symlink and an xattr; s1 of it, then a rewrite, a create,
# an unlink and a new directory; s2; then more changes to the live tree
img=$work/sd.img
src=$work/sdsrc
mkdir -p "$src/d/e"
echo one > "$src/a"
echo deep > "$src/d/e/f"
ln "$src/a" "$src/d/hard"
ln -s ../a "$src/d/sym"
setfattr -n user.colour -v blue "$src/d/e/f" 2>/dev/null
"$mkfs" -q -O atime -d "$src" "$img" 64m
sd_dbg() { "$dbg" -w -R "$1" "$img" > /dev/null 2>&1; }
echo two > "$work/two"
if sd_dbg "snapshot create s1" && sd_dbg "write -f $work/two /a" &&
   sd_dbg "write $work/two /b" && sd_dbg "rm /d/e/f" &&
   sd_dbg "mkdir /n" && sd_dbg "snapshot create s2" &&
   sd_dbg "rm /b"; then
	for t in s1 s2; do
		mkdir "$work/want-$t"
		"$dbg" -R "rdump @$t/ $work/want-$t" "$img" > /dev/null 2>&1
	done
	if start "$img" -o snapdir,strictatime; then
		s=$mnt/.snapshots
		result snapdir/hidden sh -c "! ls -a '$mnt' | grep -q snapshots"
		result snapdir/found test -d "$s"
		result snapdir/list test "$(ls "$s" | tr '\n' ' ')" = "s1 s2 "
		result snapdir/content-s1 diff -r "$work/want-s1" "$s/s1"
		result snapdir/content-s2 diff -r "$work/want-s2" "$s/s2"
		result snapdir/content-differs test "$(cat "$s/s1/a")" = one \
			-a "$(cat "$s/s2/a")" = two -a -e "$s/s2/b" \
			-a ! -e "$mnt/b" -a ! -e "$s/s2/d/e/f"
		result snapdir/xattr test "$(getfattr --only-values \
			-n user.colour "$s/s1/d/e/f" 2>/dev/null)" = blue
		i1=$(stat -c %i "$s/s1/a")
		result snapdir/inodes-stable test "$i1" = \
			"$(stat -c %i "$s/s1/d/hard")" -a \
			"$i1" = "$(stat -c %i "$s/s1/a")"
		result snapdir/inodes-per-version test "$i1" != \
			"$(stat -c %i "$s/s2/d/hard")" -a \
			"$i1" != "$(stat -c %i "$mnt/d/hard")" -a \
			"$(stat -c %i "$s/s2/d/hard")" != \
			"$(stat -c %i "$mnt/d/hard")"
		result snapdir/dotdot test "$(stat -c %i "$s/s1/..")" = \
			"$(stat -c %i "$s")" -a \
			"$(stat -c %i "$s/..")" = "$(stat -c %i "$mnt")"
		# every change in a view, and to /.snapshots, is EROFS (or
		# EEXIST for a name /.snapshots made in the root)
		: > "$work/refused"
		for c in "touch $s/s1/new" "sh -c 'echo x >> $s/s1/a'" \
			"rm $s/s1/a" "mkdir $s/s1/n2" "mv $s/s1/a $s/s1/z" \
			"ln $s/s1/a $s/s1/l2" "setfattr -n user.x -v 1 $s/s1/a" \
			"chmod 600 $s/s1/a" "truncate -s 0 $s/s1/a" \
			"mkdir $s/s3" "rmdir $s" "mv $s $mnt/elsewhere" \
			"ln $s/s1/a $mnt/l3"; do
			if out=$(eval "$c" 2>&1); then
				echo "$c succeeded" >> "$work/refused"
			elif ! echo "$out" | grep -q "Read-only\|exists"; then
				echo "$c: $out" >> "$work/refused"
			fi
		done
		if [ -s "$work/refused" ]; then
			fail snapdir/refused "$(head -3 "$work/refused" |
				tr '\n' ' ')"
		else
			pass snapdir/refused
		fi
		echo live > "$mnt/c"
		result snapdir/live-writable test "$(cat "$mnt/c")" = live
		result snapdir/stop stop
	else
		fail snapdir/mount "$(tail -1 "$log")"
	fi
	check snapdir/fsck "$img"
	result snapdir/views-unchanged sh -c "
		\"$dbg\" -R 'snapshot diff s1 s2' '$img' > '$work/diff.after' &&
		test \"\$(\"$dbg\" -R 'cat @s1/a' '$img')\" = one"
	if start "$img" -o snapdir=visible,ro; then
		result snapdir/visible sh -c "ls -a '$mnt' | grep -qx .snapshots"
		stop
	else
		fail snapdir/visible "$(tail -1 "$log")"
	fi
	# reading every view through a read-write strictatime mount sets no
	# atime there (a snapshot is read-only): the times of what was read,
	# in each version, are as before (not the volume's bytes: anything
	# that lists the mount's root, a scanner of /tmp, sets the live
	# root's atime)
	sd_times() {
		for p in @s1/a @s2/a @s1/d/e/f @s1/d /a; do
			"$dbg" -R "stat $p" "$img" 2>&1 | grep -i "time"
		done
	}
	sd_times > "$work/times.before"
	if start "$img" -o snapdir,strictatime; then
		cat "$mnt"/.snapshots/*/a "$mnt"/.snapshots/*/d/e/f \
			> /dev/null 2>&1
		result snapdir/find-all test "$(find "$mnt/.snapshots" |
			wc -l)" -eq 16
		stop
		sd_times > "$work/times.after"
		result snapdir/reads-set-no-atime cmp -s "$work/times.before" \
			"$work/times.after"
		result snapdir/times-listed test "$(grep -ci atime \
			"$work/times.after")" -eq 5
	else
		fail snapdir/reads-mount "$(tail -1 "$log")"
	fi
	if "$fuse" -f -o snapshot=s1,snapdir "$img" "$mnt" \
		> "$work/err" 2>&1; then
		fail snapdir/rw-snapshot-refused
		mounted "$mnt" && unmount_retry "$mnt" "$log"
	else
		result snapdir/rw-snapshot-refused grep -q "snapdir: not" \
			"$work/err"
	fi
	if "$fuse" -f -o snapdir=sideways "$img" "$mnt" > "$work/err" 2>&1
	then
		fail snapdir/bad-value
		mounted "$mnt" && unmount_retry "$mnt" "$log"
	else
		result snapdir/bad-value grep -q "snapdir=sideways" "$work/err"
	fi
else
	fail snapdir/make "tux3debug: snapshots and changes"
fi
rm -rf "$img" "$src"

# ---- mount.tux3 and mount -t tux3 ----
img=$work/m.img
"$mkfs" -q "$img" 32m
real=$(realpath "$img")
if TUX3FUSE=$fuse "$helper" "$img" "$mnt" -o rw,noauto,defaults,x-test=1 \
	2>> "$log"; then
	result mount/helper grep -q " $mnt .* - fuse.tux3 $real " \
		/proc/self/mountinfo
	echo helper > "$mnt/f"
	unmount_retry "$mnt" "$log"
	wait_free "$img"
	result mount/helper-committed test \
		"$("$dbg" -R "cat /f" "$img" 2>/dev/null)" = helper
else
	fail mount/helper "$(tail -1 "$log")"
fi
TUX3FUSE=$fuse "$helper" -f "$img" "$mnt" 2>> "$log"
if mounted "$mnt"; then fail mount/fake; unmount_retry "$mnt" "$log"; else pass mount/fake; fi
# mount(8) finds helpers in /sbin only: put ours there for the test when
# there is none (and take it away after), else use the installed one
if [ ! -e /sbin/mount.tux3 ] && [ "$(id -u)" = 0 ] &&
   cp "$helper" /sbin/mount.tux3 2>/dev/null; then
	sbin_helper=1
fi
if [ -x /sbin/mount.tux3 ] && [ "$(id -u)" = 0 ]; then
	if TUX3FUSE=$fuse mount -t tux3 -o ro "$img" "$mnt" 2>> "$log"; then
		result mount/mount-t test "$(cat "$mnt/f")" = helper -a \
			-n "$(grep " $mnt .* - fuse.tux3 $real ro" \
			/proc/self/mountinfo)"
		unmount_retry "$mnt" "$log"
		wait_free "$img"
	else
		fail mount/mount-t "$(tail -1 "$log")"
	fi
else
	skip mount/mount-t "needs root and /sbin/mount.tux3"
fi
if [ -n "${sbin_helper:-}" ]; then
	cmp -s "$helper" /sbin/mount.tux3 && rm -f /sbin/mount.tux3
	sbin_helper=
fi
check mount/fsck "$img"
rm -f "$img"

# any sanitizer report or library complaint in the daemons' output
if grep -qE "ERROR: AddressSanitizer|runtime error:|LeakSanitizer" "$log"
then
	# the report's first frames name where it was: the summary line
	# alone (all a CI excerpt may show) says nothing to go on
	fail sanitizer "$(grep -m1 -E 'ERROR|runtime error' "$log") at$(
		grep -m4 -E '^ +#[0-9]+ ' "$log" | sed 's/^ *#[0-9]* 0x[0-9a-f]* in / /' |
		tr '\n' ';')"
else
	pass sanitizer
fi
