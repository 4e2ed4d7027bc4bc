# Mounting and stopping tux3fuse in the FUSE tests (fuse.sh,
# fuse_workloads.sh).  The caller sets fuse (the binary), mnt (the mount
# point) and log (the daemon's log); start and stop keep dpid.  Its
# bounds scale with the build (lib/time_limit.sh).
. "$(dirname "$0")/lib/time_limit.sh"
#
# fuse_ready BINARY...: every binary built (else FAIL all, exit 1) and
# FUSE usable here (else SKIP all, exit 0: no /dev/fuse, or not root and
# no fusermount3).
fuse_ready() {
	for _b in "$@"; do
		if [ ! -x "$_b" ]; then
			fail all "$_b not built"
			exit 1
		fi
	done
	if [ ! -c /dev/fuse ]; then
		skip all "no /dev/fuse"
		exit 0
	fi
	if [ "$(id -u)" != 0 ] && ! command -v fusermount3 >/dev/null 2>&1
	then
		skip all "not root and no fusermount3"
		exit 0
	fi
}

# fuse_probe: mount a fresh volume ($work/probe.img, with $mkfs and
# start); when FUSE cannot mount here at all the script ends with one
# SKIP, when tux3fuse fails for another reason with one FAIL.  Returns
# with the probe mounted (the caller stops it).
fuse_probe() {
	img=$work/probe.img
	"$mkfs" -q "$img" 16m || { fail all "mkfs.tux3"; exit 1; }
	start "$img" && return 0
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	wait "$dpid" 2>/dev/null
	dpid=
	if grep -qiE "fuse: device not found|failed to open /dev/fuse|\
fusermount3?: .*(permitted|denied)|mount failed: (Operation not permitted|\
Permission denied)|fuse: (mount|device) .*unavailable" "$log"; then
		skip all "FUSE cannot mount here: $(tail -1 "$log")"
		exit 0
	fi
	fail all "tux3fuse did not mount: $(tail -3 "$log" | tr '\n' ' ')"
	exit 1
}

# mounted DIR: a tux3fuse mount is on DIR.
mounted() { grep -q " $1 .* - fuse.tux3 " /proc/self/mountinfo; }

# wait_mount DIR [PID]: up to 20 s (time_limit) for the mount (and PID
# alive)
wait_mount() {
	i=0 _ticks=$(( $(time_limit 20) * 10 ))
	while ! mounted "$1"; do
		[ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
		i=$((i + 1))
		[ $i -gt $_ticks ] && return 1
		sleep 0.1
	done
}

# wait_free IMG: up to 60 s (time_limit) for the daemon to let go of the
# volume (its lock)
wait_free() {
	i=0 _ticks=$(( $(time_limit 60) * 10 ))
	while ! flock -n -x "$1" true 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt $_ticks ] && return 1
		sleep 0.1
	done
}

# start IMG [tux3fuse options]: mount on $mnt in the foreground, in the
# background (dpid: without -s, the multi-threaded loop); 0 when mounted
start() {
	img=$1
	shift
	echo "== tux3fuse -f $* $img" >> "$log"
	"$fuse" -f "$@" "$img" "$mnt" >> "$log" 2>&1 &
	dpid=$!
	wait_mount "$mnt" "$dpid"
}
#
# unmount_retry MNT LOG: umount, retried while something briefly holds
# the mount ("target is busy": a process still closing a file, a scanner
# walking /tmp), lazily after 20 tries; 1 if it had to be lazy.
unmount_retry() {
	_tries=0
	until umount "$1" 2>> "$2" || fusermount3 -u "$1" 2>> "$2"; do
		_tries=$((_tries + 1))
		if [ $_tries -ge 20 ]; then
			umount -l "$1" 2>> "$2" || fusermount3 -uz "$1" 2>> "$2"
			return 1
		fi
		sleep 1
	done
	return 0
}

# wait_daemon PID: its exit status.  A daemon still running 60 s after
# its unmount gets SIGTERM (it commits and exits), 30 s later SIGKILL, so
# that no test run can hang on it (its status then says so).  Polled: a
# watchdog process would keep the test's output pipe open.
alive() {
	[ -r "/proc/$1/stat" ] &&
		[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]
}
wait_daemon() {
	_ticks=0
	while alive "$1"; do
		_ticks=$((_ticks + 1))
		[ $_ticks -eq 600 ] && kill -TERM "$1" 2>/dev/null
		[ $_ticks -eq 900 ] && kill -KILL "$1" 2>/dev/null
		sleep 0.1
	done
	_rc=0
	wait "$1" || _rc=$?
	return $_rc
}
