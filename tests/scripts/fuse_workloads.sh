#!/bin/sh
# Real workloads through tux3fuse:   sh tests/scripts/fuse_workloads.sh BUILD
# Each on a fresh volume mounted by tux3fuse (the default loop),
# then unmounted (the daemon must exit 0: waited for through the volume's
# lock) and checked by fsck.tux3 -fn, which must exit 0.
#   fuse_workloads/fio/...       fio --verify=crc32c, --ioengine=psync:
#                                sequential write, random write, mixed
#                                randrw, several files per job (numjobs>1),
#                                each verified while written and again
#                                after a remount (--verify_only)
#   fuse_workloads/stress/...    stress-ng's filesystem stressors with
#                                --verify, namespace and data groups and
#                                fallocate on a volume of its own; a
#                                stressor failing (exit status, "fail:")
#                                fails
#   fuse_workloads/xfs_io/...    pwrite/pread, overwrites, truncate down
#                                and up, fsync/fdatasync, sparse files,
#                                falloc and fpunch (against the host, the
#                                blocks counted); md5 against the same script
#                                run on the host's filesystem, again after
#                                a remount
#   fuse_workloads/sqlite/...    a database (rows in transactions, indexes,
#                                updates, deletes; rollback journal and
#                                WAL), PRAGMA integrity_check, queried again
#                                after a remount
#   fuse_workloads/git/...       git init, commit a tree, branches, a merge,
#                                git fsck --full; after a remount git fsck,
#                                git status clean, the log
#   fuse_workloads/names/...     many hard links to one file (nlink), renames
#                                across directories, a deep path, 255-byte
#                                names, 4095-byte symlinks, checked again
#                                after a remount
#   fuse_workloads/kill/...      SIGKILL of the daemon in the middle of a
#                                writer that logs each file whose fsync
#                                returned, once it has logged some (a
#                                round with none fails): the dead mount
#                                unmounted, fsck
#                                clean (replay), the remount has every
#                                logged file with its content
#   fuse_workloads/full/...      a 64 MiB volume filled with dd: ENOSPC
#                                ends dd, rm's space is there at once (data
#                                and names), partial O_DIRECT writes,
#                                unaligned punch hole, mmap stores that
#                                cannot be written back fail every fsync
#   fuse_workloads/posix/...     tests/fuse_posix (our POSIX list for the
#                                namespace operations), as root and, with
#                                allow_other, the permission cases as
#                                nobody
#   fuse_workloads/io_uring/...  -o io_uring with the fuse module's
#                                enable_uring on (root, Linux 6.14+): the
#                                POSIX list as above, /usr/include/linux
#                                copied and compared, a copy removed with
#                                rm -rf, most requests served
#                                from the rings, fsck clean, no sanitizer
#                                report; with it off, the daemon says so
#                                and serves through /dev/fuse (the
#                                parameter is restored)
#   fuse_workloads/sanitizer     no sanitizer report in the daemons' output
# Short sizes by default (make check); FUSE_FULL=1 (make fuse) runs the
# full ones.  Skips (SKIP lines) where /dev/fuse is missing or FUSE cannot
# mount here, and a workload whose program is not installed.
set -u
. "$(dirname "$0")/lib/report.sh"
. "$(dirname "$0")/lib/fuse_mount.sh"
build=${1:-build}
T=fuse_workloads
fuse=$build/tux3fuse
mkfs=$build/mkfs.tux3
fsck=$build/fsck.tux3
posix=$build/tests/fuse_posix
full=${FUSE_FULL:-0}

fuse_ready "$fuse" "$mkfs" "$fsck" "$posix"

scratch_dir
# the mount point where another user can reach it (posix/user)
mnt=$(mktemp -d /tmp/tux3fuse-wl.XXXXXX) || { fail all "mktemp"; exit 1; }
chmod 755 "$mnt"
log=$work/daemon.log
dpid= wpid=
uring_param=/sys/module/fuse/parameters/enable_uring
uring_was=
cleanup() {
	[ -n "$uring_was" ] && echo "$uring_was" > "$uring_param"
	[ -n "$wpid" ] && kill -KILL "$wpid" 2>/dev/null
	if grep -q " $mnt " /proc/self/mountinfo 2>/dev/null; then
		umount "$mnt" 2>/dev/null || fusermount3 -u "$mnt" 2>/dev/null ||
			umount -l "$mnt" 2>/dev/null
	fi
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	rmdir "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# stop: unmount $mnt, wait for the daemon and the volume's lock; the
# daemon's exit status
stop() {
	[ -z "$dpid" ] && return 1
	unmount_retry "$mnt" "$log"
	rc=0
	wait_daemon "$dpid" || rc=$?
	dpid=
	wait_free "$img" || rc=99
	return $rc
}

# check NAME: fsck.tux3 -fn of $img clean
check() {
	if out=$("$fsck" -fn "$img" 2>&1); then
		pass "$1"
	else
		fail "$1" "fsck -fn: $(printf '%s' "$out" | grep -v '^Pass' |
			grep -v '? no$' | head -3 | tr '\n' ' ')"
	fi
}

# result NAME COMMAND...: pass if the command succeeds
result() {
	rname=$1
	shift
	if "$@"; then pass "$rname"; else fail "$rname"; fi
}

# fresh NAME SIZE [mkfs options]: a new volume $work/NAME.img, mounted
fresh() {
	img=$work/$1.img
	n=$1 sz=$2
	shift 2
	rm -f "$img"
	"$mkfs" -q "$@" "$img" "$sz" || { fail "$n/mkfs"; return 1; }
	start "$img" || { fail "$n/mount" "$(tail -2 "$log" | tr '\n' ' ')"
			  return 1; }
}

# finish NAME: unmount (daemon exit 0), fsck clean, image removed
finish() {
	result "$1/unmount" stop
	check "$1/fsck"
	rm -f "$img"
}

# remount NAME: unmount (exit 0), fsck clean, mount again
remount() {
	result "$1/unmount" stop
	check "$1/fsck"
	start "$img" || { fail "$1/remount" "$(tail -2 "$log" | tr '\n' ' ')"
			  return 1; }
}

# ---- can FUSE mount here at all? ----
fuse_probe
stop
rm -f "$img"

# sizes: short (make check) and full (make fuse)
if [ "$full" = 1 ]; then
	fio_mb=256 fio_vol=2g stress_s=30 xfs_mb=256 rows=200000 git_src=/usr/include
	links=5000 renames=5000 depth=400 kills=6 kill_vol=4g
else
	fio_mb=16 fio_vol=256m stress_s=3 xfs_mb=8 rows=5000 git_src=/usr/include/linux
	links=1000 renames=500 depth=100 kills=3 kill_vol=1g
fi

# want SECTION: FUSE_ONLY (a list of sections) unset or naming it
want() {
	[ -z "${FUSE_ONLY:-}" ] && return 0
	case " $FUSE_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

# ---- fio with crc32c verification ----
# fio_job NAME ARGS...: write and verify, remount, verify again
fio_job() {
	name=fio/$1
	shift
	fresh fio "$fio_vol" || return
	mkdir "$mnt/fio"
	set -- --directory="$mnt/fio" --ioengine=psync --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --randrepeat=1 \
		--verify_state_save=0 \
		--group_reporting "$@"
	if fio --name=w "$@" > "$work/fio.out" 2>&1 &&
	   ! grep -q "verify: bad" "$work/fio.out"; then
		pass "$name/write-verify"
	else
		fail "$name/write-verify" "$(grep -iE 'err|bad|fail' \
			"$work/fio.out" | head -2 | tr '\n' ' ')"
	fi
	remount "$name" || return
	if fio --name=w "$@" --verify_only > "$work/fio.out" 2>&1 &&
	   ! grep -q "verify: bad" "$work/fio.out"; then
		pass "$name/reverify"
	else
		fail "$name/reverify" "$(grep -iE 'err|bad|fail' \
			"$work/fio.out" | head -2 | tr '\n' ' ')"
	fi
	finish "$name/end"
}
if ! want fio; then :
elif command -v fio >/dev/null 2>&1; then
	per=$((fio_mb / 2))
	fio_job seq --rw=write --bs=128k --size=${per}m --numjobs=2 \
		--end_fsync=1
	fio_job rand --rw=randwrite --bs=4k --size=${per}m --numjobs=2 \
		--fsync=64
	fio_job mixed --rw=randrw --rwmixread=40 --bs=16k --size=${per}m \
		--numjobs=2
	fio_job files --rw=randwrite --bs=8k --size=$((fio_mb / 4))m \
		--numjobs=4 --nrfiles=8 --file_service_type=random \
		--fdatasync=32
else
	skip fio "fio not installed"
fi

# ---- stress-ng ----
# stress_run SECONDS STRESSOR...: the stressors at once on the mounted
# volume, their output in $work/stress.out; returns stress-ng's status
stress_run() {
	secs=$1
	shift
	args=
	for s in "$@"; do args="$args --$s 2"; done
	# shellcheck disable=SC2086
	stress-ng $args --timeout "$secs" --verify --temp-path "$mnt" \
		--hdd-bytes 16m --hdd-write-size 4k --hdd-opts wr-rnd,rd-rnd,fsync \
		--seek-size 16m --iomix-bytes 16m --sync-file-bytes 16m \
		--fallocate-bytes 128m \
		--metrics-brief > "$work/stress.out" 2>&1
}

# did stressor $1 report its metrics (it ran) in $2?
stress_ran() {
	grep -qE "^stress-ng: metrc: .*\] $1 +[0-9]" "$2"
}

# stress GROUP VOLSIZE STRESSOR...: the stressors at once on one volume.
# On a loaded machine (a sanitizer build beside other jobs) a stressor
# can spend the whole short run starting up and report nothing: those
# run again, alone together, four times as long, before "did not run"
# counts as a failure (its output then goes to the log).
stress() {
	group=$1 vsz=$2
	shift 2
	fresh stress "$vsz" || return
	stress_run "$stress_s" "$@"
	rc=$?
	cp "$work/stress.out" "$work/stress.all"
	late=
	for s in "$@"; do
		stress_ran "$s" "$work/stress.all" || late="$late $s"
	done
	if [ -n "$late" ]; then
		echo "stress/$group: no metrics from$late in ${stress_s} s; again for $((stress_s * 4)) s"
		# shellcheck disable=SC2086
		stress_run $((stress_s * 4)) $late
		rc2=$?
		[ $rc = 0 ] && rc=$rc2
		cat "$work/stress.out" >> "$work/stress.all"
	fi
	for s in "$@"; do
		if grep -E "^stress-ng: (fail|error): " "$work/stress.all" |
			grep -qF -e "($s)" -e "] $s:"; then
			fail "stress/$group/$s" "$(grep -m1 -E \
				"^stress-ng: (fail|error): .*$s" "$work/stress.all")"
		elif ! stress_ran "$s" "$work/stress.all"; then
			fail "stress/$group/$s" "did not run: $(grep -m1 -E \
				'^stress-ng: (fail|error)|unrecognized' "$work/stress.all")"
			echo "---- stress-ng output ($group) ----"
			cat "$work/stress.all"
		else
			pass "stress/$group/$s"
		fi
	done
	if [ $rc = 0 ] && ! grep -qE "^stress-ng: fail:|unsuccessful run" \
		"$work/stress.all"; then
		pass "stress/$group/exit"
	else
		fail "stress/$group/exit" "status $rc: $(grep -m2 -E \
			'^stress-ng: (fail|error)' "$work/stress.all" |
			tr '\n' ' ')"
	fi
	result "stress/$group/left-nothing" test -z "$(ls -A "$mnt")"
	finish "stress/$group"
}
if ! want stress; then :
elif command -v stress-ng >/dev/null 2>&1; then
	# (not applicable to tux3fuse, which has no FIEMAP or
	# copy_file_range: fiemap, copy-file, file-ioctl; nor fsize, whose
	# RLIMIT_FSIZE cases use fallocate modes tux3fuse answers EOPNOTSUPP,
	# and the kernel's answer then varies)
	stress names 256m dir dentry link symlink rename filename mknod \
		dirdeep dirmany getdent chmod chown utime fstat open xattr \
		flock lockf
	stress data 512m hdd seek iomix readahead sync-file io
	stress falloc 512m fallocate
else
	skip stress "stress-ng not installed"
fi

# ---- xfs_io ----
# the script: run on $1 (a file), prints nothing on success
xfs_script() {
	f=$1
	mb=$xfs_mb
	xfs_io -f \
		-c "pwrite -q -S 0x61 -b 64k 0 ${mb}m" \
		-c "pwrite -q -S 0x62 -b 4k 700001 5000" \
		-c "pwrite -q -S 0x63 -b 1k $((mb * 1048576 - 3000)) 7000" \
		-c "fsync" \
		-c "truncate $((mb * 524288 + 123))" \
		-c "truncate $((mb * 1048576 * 2))" \
		-c "pwrite -q -S 0x64 $((mb * 1048576 * 3)) 4096" \
		-c "fdatasync" \
		-c "pwrite -q -S 0x65 -b 512 $((mb * 1048576 + 511)) 1025" \
		-c "pread -q 0 $((mb * 1048576 * 3 + 4096))" \
		"$f"
}
if ! want xfs_io; then :
elif command -v xfs_io >/dev/null 2>&1; then
	if fresh xfs_io 1g; then
		xfs_script "$work/host" > "$work/x.host" 2>&1
		xfs_script "$mnt/x" > "$work/x.out" 2>&1
		result xfs_io/script-ran test ! -s "$work/x.out"
		sum=$(md5sum < "$work/host")
		size=$(stat -c %s "$work/host")
		result xfs_io/content test "$(md5sum < "$mnt/x")" = "$sum" -a \
			"$(stat -c %s "$mnt/x")" = "$size"
		# sparse: the hole between the truncate and the last writes
		# holds no blocks
		blocks=$(stat -c %b "$mnt/x")
		result xfs_io/sparse test "$blocks" -lt $((xfs_mb * 2048 * 2))
		# a sparse file far out
		xfs_io -f -c "pwrite -q -S 0x66 1t 4k" -c "pread -q 1t 4k" \
			"$mnt/far" > "$work/x.out" 2>&1
		result xfs_io/far-sparse test ! -s "$work/x.out" -a \
			"$(stat -c %s "$mnt/far")" = $((1099511627776 + 4096)) -a \
			"$(stat -c %b "$mnt/far")" -le 16
		# fallocate and punching holes: the content as on the host,
		# the preallocated blocks there, the punched ones gone
		falloc_script() {
			xfs_io -f -c "pwrite -q -S 0x61 0 100k" \
				-c "falloc 200k 300k" -c "fpunch 5000 30000" \
				-c "falloc -k 0 64k" -c "fpunch 90000 200k" \
				-c "pwrite -q -S 0x62 450k 1000" "$1"
		}
		falloc_script "$work/fa.host" > "$work/fa.out" 2>&1
		falloc_script "$mnt/fa" >> "$work/fa.out" 2>&1
		result xfs_io/falloc test ! -s "$work/fa.out" -a \
			"$(md5sum < "$mnt/fa")" = "$(md5sum < "$work/fa.host")" \
			-a "$(stat -c %s "$mnt/fa")" = 512000
		# 0..4999 and 35000..89999 hold data, 300k..500k are
		# preallocated: 83 or so blocks of 4 KiB, not 125
		blocks=$(stat -c %b "$mnt/fa")
		result xfs_io/falloc-blocks test "$blocks" -ge 480 -a \
			"$blocks" -le 720
		out=$(xfs_io -c "falloc -k 0 1m" "$mnt/fa" 2>&1)
		result xfs_io/falloc-past-size-refused test -n "$out"
		# fsync of a fresh file, then its directory
		xfs_io -f -c "pwrite -q 0 10000" -c fsync "$mnt/s" &&
		xfs_io -c fsync "$mnt"
		result xfs_io/fsync test $? = 0
		if remount xfs_io/remount; then
			result xfs_io/content-remount test \
				"$(md5sum < "$mnt/x")" = "$sum" -a \
				"$(stat -c %s "$mnt/x")" = "$size" -a \
				"$(stat -c %s "$mnt/s")" = 10000
			finish xfs_io/end
		fi
	fi
	# a file of many small extents (a data tree with index nodes),
	# removed: its tree blocks must be freed with it
	if fresh xfs_io-scatter 256m; then
		i=0 cmds=
		while [ $i -lt 600 ]; do
			cmds="$cmds -c 'pwrite -q $((i * 8192)) 4096'"
			i=$((i + 1))
		done
		eval "xfs_io -f $cmds '$mnt/sc'" > "$work/x.out" 2>&1
		result xfs_io/scattered test ! -s "$work/x.out" -a \
			"$(stat -c %b "$mnt/sc")" = 4800
		rm -f "$mnt/sc"
		finish xfs_io/scattered-removed
	fi
else
	skip xfs_io "xfs_io not installed"
fi

# ---- sqlite3 ----
if ! want sqlite; then :
elif command -v sqlite3 >/dev/null 2>&1; then
	if fresh sqlite 512m; then
		db=$mnt/t.db
		{
			echo "CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, v BLOB, n INTEGER);"
			echo "CREATE INDEX tk ON t(k);"
			i=0
			while [ $i -lt $rows ]; do
				echo "BEGIN;"
				echo "WITH RECURSIVE c(x) AS (SELECT $i UNION ALL SELECT x + 1 FROM c WHERE x < $((i + 999)))"
				echo "  INSERT INTO t SELECT x, 'key' || (x * 7919 % 100003), randomblob(x % 700), x FROM c;"
				echo "COMMIT;"
				i=$((i + 1000))
			done
			echo "CREATE INDEX tn ON t(n);"
			echo "BEGIN; UPDATE t SET v = randomblob(1000) WHERE id % 3 = 0; COMMIT;"
			echo "BEGIN; DELETE FROM t WHERE id % 5 = 0; COMMIT;"
			echo "VACUUM;"
		} | sqlite3 "$db" > "$work/sql.out" 2>&1
		result sqlite/build test $? = 0 -a ! -s "$work/sql.out"
		expect=$((rows - rows / 5))
		result sqlite/count test \
			"$(sqlite3 "$db" 'SELECT count(*) FROM t;')" = "$expect"
		result sqlite/integrity test \
			"$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok
		# WAL: shared memory through mmap of the -shm file
		sqlite3 "$mnt/w.db" "PRAGMA journal_mode=WAL;
			CREATE TABLE w (a, b); BEGIN;
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $rows)
			INSERT INTO w SELECT x, randomblob(100) FROM c; COMMIT;" \
			> "$work/sql.out" 2>&1
		result sqlite/wal test "$(cat "$work/sql.out")" = wal -a \
			"$(sqlite3 "$mnt/w.db" 'SELECT count(*) FROM w;')" = "$rows"
		if remount sqlite/remount; then
			result sqlite/integrity-remount test \
				"$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok
			result sqlite/query-remount test \
				"$(sqlite3 "$db" "SELECT count(*) FROM t WHERE k LIKE 'key1%';")" \
				-gt 0 -a "$(sqlite3 "$db" 'SELECT count(*) FROM t;')" \
				= "$expect"
			result sqlite/wal-remount test \
				"$(sqlite3 "$mnt/w.db" 'PRAGMA integrity_check; SELECT count(*) FROM w;' |
				tr '\n' ' ')" = "ok $rows "
			finish sqlite/end
		fi
	fi
else
	skip sqlite "sqlite3 not installed"
fi

# ---- git ----
if ! want git; then :
elif command -v git >/dev/null 2>&1; then
	if fresh git 1g; then
		r=$mnt/repo
		g() { git -C "$r" -c user.name=t -c user.email=t@t \
			-c init.defaultBranch=main -c gc.auto=0 "$@"; }
		ok=0
		{
			mkdir "$r" && g init -q &&
			cp -a "$git_src" "$r/tree" && g add -A &&
			g commit -q -m one &&
			g checkout -q -b side &&
			find "$r/tree" -name '*.h' | head -200 | xargs sed -i '1i // side' &&
			g commit -q -a -m side &&
			g checkout -q main &&
			echo main > "$r/tree/MAIN" && g add tree/MAIN &&
			g commit -q -m main &&
			g merge -q --no-edit side &&
			g mv tree moved && g commit -q -m moved &&
			g branch b2 HEAD~2 &&
			g gc -q && g tag v1
		} > "$work/git.out" 2>&1 || ok=1
		result git/commits test $ok = 0
		result git/fsck g fsck --full --strict --no-progress
		result git/status test -z "$(g status --porcelain)"
		head=$(g rev-parse HEAD)
		count=$(g log --oneline | wc -l)
		if remount git/remount; then
			result git/fsck-remount \
				g fsck --full --strict --no-progress
			result git/status-remount test -z "$(g status --porcelain)"
			result git/log-remount test "$(g rev-parse HEAD)" = "$head" -a \
				"$(g log --oneline | wc -l)" = "$count" -a "$count" = 5
			result git/diff-source diff -r --no-dereference "$git_src" "$r/moved" -x MAIN \
				-q -I '^// side$'
			finish git/end
		fi
	fi
else
	skip git "git not installed"
fi

# ---- names: hard links, renames, deep paths, long names and symlinks ----
if want names && fresh names 512m; then
	m=$mnt
	mkdir "$m/l" "$m/a" "$m/b" "$m/c"
	echo target > "$m/l/t"
	i=0
	while [ $i -lt $links ]; do
		echo "$m/l/t"
		echo "$m/l/n$i"
		i=$((i + 1))
	done | xargs -n 2 ln
	result names/links test "$(stat -c %h "$m/l/t")" = $((links + 1)) -a \
		"$(ls "$m/l" | wc -l)" = $((links + 1))
	find "$m/l" -name 'n*[02468]' -delete
	half=$((links / 2 + 1))
	result names/links-unlinked test "$(stat -c %h "$m/l/t")" = $half -a \
		"$(cat "$m/l/n1")" = target
	i=0
	while [ $i -lt $renames ]; do
		echo $i > "$m/a/f$i"
		i=$((i + 1))
	done
	(cd "$m/a" && ls | xargs -I{} mv {} ../b/{}.1) &&
	(cd "$m/b" && ls | xargs -I{} mv {} ../c/{}.2)
	result names/renames test "$(ls "$m/a" | wc -l)" = 0 -a \
		"$(ls "$m/b" | wc -l)" = 0 -a "$(ls "$m/c" | wc -l)" = $renames \
		-a "$(cat "$m/c/f7.1.2")" = 7
	mv "$m/c" "$m/a/c" && mv "$m/a" "$m/b/a"
	result names/rename-dirs test "$(cat "$m/b/a/c/f3.1.2")" = 3 -a \
		"$(stat -c %h "$m/b")" = 3 -a "$(stat -c %h "$m/b/a")" = 3
	i=0
	p=
	while [ $i -lt $depth ]; do p="${p}d$i/"; i=$((i + 1)); done
	(cd "$m" && mkdir -p "$p" && echo deep > "${p}f")
	result names/deep test "$(cat "$m/${p}f")" = deep -a \
		"$(find "$m/d0" -type d | wc -l)" = $depth
	name=$(printf 'n%.0s' $(seq 1 255))
	echo long > "$m/$name" && mkdir "$m/D$(printf '%.254s' "$name")"
	if touch "$m/x$name" 2>/dev/null; then ok=1; else ok=0; fi
	result names/long-name test "$(cat "$m/$name")" = long -a $ok = 0 -a \
		-d "$m/D$(printf '%.254s' "$name")"
	target=$(printf 'abcdefghijklmnopqrstuvwxyz0123456789/%.0s' $(seq 1 120))
	target=$(printf '%.4095s' "$target")
	ln -s "$target" "$m/sym" && ln -s "$target" "$m/b/sym2"
	if ln -s "${target}x" "$m/sym3" 2>/dev/null; then ok=1; else ok=0; fi
	result names/long-symlink test "$(readlink "$m/sym")" = "$target" -a \
		"$(stat -c %s "$m/b/sym2")" = 4095 -a $ok = 0
	if remount names/remount; then
		result names/after-remount test \
			"$(stat -c %h "$m/l/t")" = $half -a \
			"$(ls "$m/b/a/c" | wc -l)" = $renames -a \
			"$(cat "$m/${p}f")" = deep -a \
			"$(cat "$m/$name")" = long -a \
			"$(readlink "$m/b/sym2")" = "$target"
		rm -rf "$m/l" "$m/d0"
		result names/removed test ! -e "$m/l" -a ! -e "$m/d0"
		finish names/end
	fi
fi

# ---- SIGKILL in the middle of a writer ----
# The writer makes files k/NNN/fN (sizes 1 byte to 300 KiB, content from
# the name), fsyncs every third and directory now and then, and appends a
# name to the log outside the volume only after its fsync returned.
cat > "$work/writer.py" <<'EOF'
import hashlib, os, sys
top, logname = sys.argv[1], sys.argv[2]
log = open(logname, "a")
def content(name):
    h = hashlib.sha256(name.encode()).digest()
    n = int.from_bytes(h[:4], "little") % 300000 + 1
    return (h * (n // len(h) + 1))[:n]
i = 0
while i < 6000:
    d = os.path.join(top, "%03d" % (i // 50))
    if i % 50 == 0:
        os.mkdir(d)
    name = "%s/f%d" % (os.path.basename(d), i)
    fd = os.open(os.path.join(top, name), os.O_CREAT | os.O_WRONLY, 0o644)
    data = content(name)
    for off in range(0, len(data), 65536):
        os.write(fd, data[off:off + 65536])
    if i % 3 == 0:
        os.fsync(fd)
        log.write(name + "\n")
        log.flush()
        os.fsync(log.fileno())
    os.close(fd)
    if i % 7 == 0 and i > 0:
        victim = os.path.join(top, "%03d" % ((i - 1) // 50), "f%d" % (i - 1))
        if (i - 1) % 3:
            os.unlink(victim)
    i += 1
EOF
cat > "$work/verify.py" <<'EOF'
import hashlib, os, sys
top, logname = sys.argv[1], sys.argv[2]
def content(name):
    h = hashlib.sha256(name.encode()).digest()
    n = int.from_bytes(h[:4], "little") % 300000 + 1
    return (h * (n // len(h) + 1))[:n]
names = [l.strip() for l in open(logname) if l.strip()]
if not names:
    print("no fsync'd file was logged: nothing to check")
    sys.exit(1)
bad = 0
for name in names:
    try:
        got = open(os.path.join(top, name), "rb").read()
    except OSError as e:
        print("missing", name, e); bad += 1; continue
    if got != content(name):
        print("wrong", name, len(got)); bad += 1
print(len(names), "synced files", bad, "bad")
sys.exit(1 if bad else 0)
EOF
if ! want kill; then :
elif command -v python3 >/dev/null 2>&1; then
	img=$work/kill.img
	"$mkfs" -q "$img" "$kill_vol"
	round=1
	while [ $round -le $kills ]; do
		name=kill/$round
		# different moments and commit intervals
		case $round in
		1) wait_ms=700 copt=commit=5 ;;
		2) wait_ms=1900 copt=commit=1 ;;
		3) wait_ms=3300 copt=commit=0 ;;
		*) wait_ms=$(( (round * 1300) % 7000 + 500 )) copt=commit=$((round % 3)) ;;
		esac
		if ! start "$img" -o "$copt"; then
			fail "$name/mount" "$(tail -2 "$log" | tr '\n' ' ')"
			break
		fi
		mkdir "$mnt/r$round"
		: > "$work/synced.$round"
		python3 "$work/writer.py" "$mnt/r$round" "$work/synced.$round" \
			> /dev/null 2>&1 &
		wpid=$!
		# the kill must leave fsync'd files to look for, however
		# slow the machine: wait (up to 60 s) until the writer has
		# logged a few, then the round's own delay
		need=$((round * 3)) waited=0
		while [ "$(wc -l < "$work/synced.$round")" -lt $need ] &&
		      [ $waited -lt 1200 ] && kill -0 "$wpid" 2>/dev/null; do
			sleep 0.05
			waited=$((waited + 1))
		done
		sleep "$(awk "BEGIN { print $wait_ms / 1000 }")"
		kill -KILL "$dpid"
		wait "$dpid" 2>/dev/null
		dpid=
		kill -KILL "$wpid" 2>/dev/null
		wait "$wpid" 2>/dev/null
		wpid=
		umount "$mnt" 2>/dev/null || fusermount3 -u "$mnt" 2>/dev/null ||
			umount -l "$mnt" 2>/dev/null
		result "$name/dead-unmounted" wait_free "$img"
		check "$name/fsck-before-replay"
		if start "$img"; then
			if out=$(python3 "$work/verify.py" "$mnt/r$round" \
				"$work/synced.$round" 2>&1); then
				pass "$name/synced-present"
				echo "$name: $(echo "$out" | tail -1), killed after\
 ${wait_ms} ms, $copt"
			else
				fail "$name/synced-present" "$(echo "$out" |
					tail -3 | tr '\n' ' ')"
			fi
			# the earlier rounds' files are still whole too
			prev=1 bad=0
			while [ $prev -lt $round ]; do
				python3 "$work/verify.py" "$mnt/r$prev" \
					"$work/synced.$prev" > /dev/null 2>&1 || bad=1
				prev=$((prev + 1))
			done
			result "$name/earlier-rounds" test $bad = 0
			result "$name/unmount" stop
			check "$name/fsck"
		else
			fail "$name/remount" "$(tail -2 "$log" | tr '\n' ' ')"
			break
		fi
		round=$((round + 1))
	done
	rm -f "$img"
else
	skip kill "no python3"
fi

# ---- a full volume (64 MiB, filled with dd), as ext4 behaves ----
# dd to a full volume ends with ENOSPC (the writeback cache must not
# take writes for ever); space an rm frees is there at once (a change
# that meets ENOSPC commits and retries, as ext4 commits its journal),
# for data and for names (mknod, link, rename); an O_DIRECT write that
# only partly fits keeps what fitted and says ENOSPC; an unaligned punch
# hole succeeds; stores through mmap into holes that cannot be written
# back are reported by every later fsync, not once.
full_fill() {
	timeout 120 dd if=/dev/zero of="$mnt/fill" bs=1M 2> "$work/dd.err"
	grep -q "No space left" "$work/dd.err"
}
mmap_holes='
import errno, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
size = 8 << 20
os.ftruncate(fd, size)
m = mmap.mmap(fd, size)
m[:] = b"y" * size
out = []
try:
    m.flush()
    out.append("OK")
except OSError as e:
    out.append(errno.errorcode[e.errno])
for i in range(2):
    try:
        os.fsync(fd)
        out.append("OK")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
print(" ".join(out))
'
if fresh full 64m; then
	result full/dd-enospc full_fill
	rm -f "$mnt/fill"
	result full/refill-after-rm full_fill
	result full/refill-size test "$(stat -c %s "$mnt/fill")" -gt 50000000
	rm -f "$mnt/fill"
	echo x > "$mnt/a" && full_fill
	result full/names-after-rm sh -c "rm -f '$mnt/fill' &&
		mkfifo '$mnt/p' && ln '$mnt/a' '$mnt/b' && mv '$mnt/b' '$mnt/c'"
	# 3 MiB free: an 8 MiB O_DIRECT write keeps what fits
	rm -f "$mnt/fill"
	touch "$mnt/direct"
	sync "$mnt"
	free=$(($(stat -f -c '%a * %S' "$mnt") / 1048576))
	dd if=/dev/zero of="$mnt/fill" bs=1M count=$((free - 3)) conv=fsync \
		2>/dev/null
	dd if=/dev/urandom of="$mnt/direct" bs=8M count=1 oflag=direct \
		2> "$work/dd.err"
	got=$(stat -c %s "$mnt/direct" 2>/dev/null || echo 0)
	result full/odirect-partial test "$got" -gt 0 -a "$got" -lt 8388608
	result full/odirect-enospc grep -q "No space left" "$work/dd.err"
	# filled with O_DIRECT writes: no write back of cached data fails
	# to stand in the way of the punch's close
	rm -f "$mnt/fill"
	dd if=/dev/zero of="$mnt/fill" bs=1M oflag=direct 2>/dev/null
	result full/punch-unaligned fallocate -p -o 1000 -l 100000 \
		"$mnt/fill"
	rm -f "$mnt/fill"
	touch "$mnt/holes"
	full_fill
	if command -v python3 >/dev/null 2>&1; then
		got=$(python3 -c "$mmap_holes" "$mnt/holes" 2>&1)
		if [ "$got" = "ENOSPC ENOSPC ENOSPC" ]; then
			pass full/mmap-fsync-every-time
		else
			fail full/mmap-fsync-every-time "$got"
		fi
	fi
	finish full
fi

# ---- our POSIX list ----
# posix_run NAME ARGS...: tests/fuse_posix on $mnt, its lines as NAME/...
posix_run() {
	pname=$1
	shift
	"$posix" "$mnt" "$@" > "$work/posix.out" 2> "$work/posix.err"
	rc=$?
	sed -n 's#^\(PASS\|FAIL\|SKIP\) posix/#\1 '"$T/$pname"'/#p' \
		"$work/posix.out"
	cat "$work/posix.err"
	if [ $rc = 0 ]; then pass "$pname/exit"
	else fail "$pname/exit" "status $rc: $(tail -1 "$work/posix.err")"
	fi
}

# posix_atime NAME MODE MOUNT-OPTIONS...: the atime cases alone on a
# mount of $img with these options, then an atime left on a file read
# back after a remount
posix_atime() {
	aname=$1 amode=$2
	shift 2
	if ! start "$img" "$@"; then
		fail "$aname/mount" "$(tail -2 "$log" | tr '\n' ' ')"
		return
	fi
	posix_run "$aname" --atime "$amode" --only-atime
	"$posix" "$mnt" --atime-set "$mnt/$aname.remount" >/dev/null
	stop || fail "$aname/unmount"
	if start "$img" "$@"; then
		posix_run "$aname/remount" --atime "$amode" \
			--atime-get "$mnt/$aname.remount"
		result "$aname/unmount" stop
	else
		fail "$aname/remount" "$(tail -2 "$log" | tr '\n' ' ')"
	fi
}

# the whole list on a volume with the atime feature (relatime), as root
# and, with allow_other, as nobody
img=$work/posix.img
"$mkfs" -q -O atime "$img" 64m
if ! want posix; then :
elif start "$img" -o allow_other; then
	posix_run posix --atime relatime --user 65534:65534
	result posix/unmount stop
	check posix/fsck
	posix_atime posix-relatime relatime
	posix_atime posix-strictatime strict -o strictatime
	posix_atime posix-noatime noatime -o noatime
	check posix/atime-fsck
else
	fail posix/mount "$(tail -2 "$log" | tr '\n' ' ')"
fi
rm -f "$img"
# a volume without the feature: atime is mtime, reads change nothing,
# and the volume stays in the 2014 format
"$mkfs" -q "$img" 64m
if want posix; then
	posix_atime posix-2014 none
	check posix-2014/fsck
	magic=$(od -An -tx1 -j4096 -N8 "$img" | tr -d ' \n')
	if [ "$magic" = 7475783320140506 ]; then
		pass posix-2014/magic
	else
		fail posix-2014/magic "$magic"
	fi
fi
rm -f "$img"

# ---- FUSE over io_uring: a queue per CPU (its own log: the daemon
# tells what the rings served) ----
if ! want io_uring; then :
elif [ "$(id -u)" != 0 ] || [ ! -w "$uring_param" ]; then
	skip io_uring/all "needs root and $uring_param (Linux 6.14+)"
else
	main_log=$log log=$work/uring.log
	uring_was=$(cat "$uring_param")
	echo Y > "$uring_param"
	img=$work/uring.img
	"$mkfs" -q -O atime "$img" 256m
	if start "$img" -o io_uring,allow_other; then
		posix_run io_uring/posix --atime relatime --user 65534:65534
		if cp -a /usr/include/linux "$mnt/linux" &&
		   diff -r --no-dereference /usr/include/linux "$mnt/linux"; then
			pass io_uring/copy
		else
			fail io_uring/copy
		fi
		# files unlinked while the kernel still holds them open
		cp -a /usr/include/linux "$mnt/again" &&
			result io_uring/rm rm -rf "$mnt/again"
		result io_uring/unmount stop
		served=$(sed -n 's/^tux3fuse: io_uring: \([0-9]*\) requests.*/\1/p' \
			 "$log" | tail -1)
		if [ "${served:-0}" -ge 1000 ]; then
			pass io_uring/served
		else
			fail io_uring/served "${served:-no} requests from the rings: $(
				grep -m2 'io_uring' "$log" | tr '\n' ' ')"
		fi
		check io_uring/fsck
	else
		fail io_uring/mount "$(tail -2 "$log" | tr '\n' ' ')"
	fi
	# the kernel not offering it: said, and served through /dev/fuse
	echo N > "$uring_param"
	uring_log=$log log=$work/uring-off.log
	if start "$img" -o io_uring; then
		if cmp -s /usr/include/linux/fs.h "$mnt/linux/fs.h" &&
		   grep -q "io_uring: the kernel does not offer it" "$log" &&
		   ! grep -q "requests served" "$log"; then
			pass io_uring/fallback
		else
			fail io_uring/fallback "$(grep -m2 io_uring "$log" |
				tr '\n' ' ')"
		fi
		result io_uring/fallback-unmount stop
	else
		fail io_uring/fallback-mount "$(tail -2 "$log" | tr '\n' ' ')"
	fi
	cat "$log" >> "$uring_log"
	log=$uring_log
	echo "$uring_was" > "$uring_param"
	uring_was=
	rm -f "$img"
	if grep -qE "ERROR: AddressSanitizer|runtime error:|LeakSanitizer" \
		"$log"; then
		fail io_uring/sanitizer "$(grep -m1 -E 'ERROR|runtime error' "$log")"
	else
		pass io_uring/sanitizer
	fi
	log=$main_log
fi

# any sanitizer report or library complaint in the daemons' output
if grep -qE "ERROR: AddressSanitizer|runtime error:|LeakSanitizer" "$log"
then
	fail sanitizer "$(grep -m1 -E 'ERROR|runtime error' "$log")"
else
	pass sanitizer
fi
if grep -q "^tux3fuse: " "$log"; then
	fail daemon-errors "$(grep -m2 '^tux3fuse: ' "$log" | tr '\n' ' ')"
else
	pass daemon-errors
fi
