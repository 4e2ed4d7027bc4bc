# A udevd for the udev tests (probe.sh, boot.sh; sourced, not run).
#
# udevd_up: a udevd that runs the rules: the one running here (it answers
#   `udevadm control --ping`), else a private systemd-udevd started now
#   (root, udevadm and the daemon installed; a machine without systemd as
#   init has none running).  Returns 1 with the reason in $udevd_why when
#   neither.  Holds a lock so that two test runs do not start or stop one
#   under each other.
# udevd_rule SRC NAME: SRC installed as /run/udev/rules.d/NAME, rules
#   reloaded when a udevd runs (`udevadm test` reads it without one);
#   udevd_down removes it.
# udevd_down: removes the rule, stops only a udevd udevd_up started, and
#   removes what that one made (/run/udev, /dev/disk) when they were not
#   there before: the machine is left as it was.  Detach loop devices
#   first, so a running udevd drops their links.
udevd_pid= udevd_why= udevd_rule_file= udevd_made_run=0 udevd_made_disk=0
udevd_locked=0

udevd_lock() {
	[ $udevd_locked = 1 ] && return 0
	exec 9> "${TMPDIR:-/tmp}/tux3-tests-udevd.lock"
	flock -w 300 9 2>/dev/null || true
	udevd_locked=1
	# what the rules, udevadm test and a udevd make, when not there yet
	[ -e /run/udev ] || udevd_made_run=1
	[ -e /dev/disk ] || udevd_made_disk=1
}

udevd_alive() {
	[ -S /run/udev/control ] && udevadm control --ping -t 2 >/dev/null 2>&1
}

udevd_up() {
	if ! command -v udevadm >/dev/null 2>&1; then
		udevd_why="udevadm missing (package udev)"
		return 1
	fi
	udevd_lock
	udevd_alive && return 0
	if [ "$(id -u)" != 0 ]; then
		udevd_why="no udevd running and not root to start one"
		return 1
	fi
	_d=
	for _c in /lib/systemd/systemd-udevd /usr/lib/systemd/systemd-udevd; do
		[ -x "$_c" ] && { _d=$_c; break; }
	done
	if [ -z "$_d" ]; then
		udevd_why="no udevd running and no systemd-udevd installed"
		return 1
	fi
	# in the foreground of a background job: our child, stopped by its
	# pid and reaped by wait (--daemon would leave it to PID 1)
	"$_d" 9>&- > "$work/udevd.log" 2>&1 &
	udevd_pid=$!
	_n=0
	until udevd_alive; do
		_n=$((_n + 1))
		if [ $_n -gt 50 ] || ! kill -0 "$udevd_pid" 2>/dev/null; then
			udevd_why="systemd-udevd did not start: $(tail -n 1 "$work/udevd.log")"
			udevd_down
			return 1
		fi
		sleep 0.2
	done
	return 0
}

udevd_rule() {
	udevd_lock
	mkdir -p /run/udev/rules.d || return 1
	udevd_rule_file=/run/udev/rules.d/$2
	cp "$1" "$udevd_rule_file" || return 1
	! udevd_alive || udevadm control --reload
}

udevd_down() {
	# the events of the loop devices just detached, before the rule goes
	udevd_alive && udevadm settle -t 10 2>/dev/null
	if [ -n "$udevd_rule_file" ]; then
		rm -f "$udevd_rule_file"
		udevd_rule_file=
		[ -z "$udevd_pid" ] && udevd_alive && udevadm control --reload
	fi
	if [ -n "$udevd_pid" ]; then
		kill "$udevd_pid" 2>/dev/null
		wait "$udevd_pid" 2>/dev/null
		udevd_pid=
	fi
	[ $udevd_made_run = 1 ] && rm -rf /run/udev
	[ $udevd_made_disk = 1 ] && rm -rf /dev/disk
	udevd_made_run=0 udevd_made_disk=0
	exec 9>&-
	udevd_locked=0
}

# udevd_settle DEV: a change event for DEV, run to the end
udevd_settle() {
	udevadm trigger --action=change --settle "$1" 2>/dev/null ||
		{ udevadm trigger --action=change "$1"; udevadm settle -t 30; }
}
