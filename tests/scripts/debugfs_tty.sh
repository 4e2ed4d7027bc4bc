#!/bin/sh
# The interactive tux3debug on a pseudo-terminal, driven by
# tests/debugfs/ptydrive.c (built here with cc) as a user at the
# keyboard: the prompt, tab completion of a command, of paths (a file and
# a directory), of help's command argument and of set_super/set_inode
# field names, history recall with the arrow key inside a session and
# from ~/.tux3debug_history in the next one, help, long output through
# $PAGER (short output not), and end of file leaving with status 0.
# Skips where there is no compiler or no pseudo-terminal.
#   sh tests/scripts/debugfs_tty.sh BUILD
set -u
build=${1:-build}
top=$(pwd)
dbg=$top/$build/tux3debug
mkfs=$top/$build/mkfs.tux3
T=debugfs_tty
. tests/scripts/lib/report.sh
if [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	skip all "$dbg or $mkfs not built"; exit 0
fi
cc=${CC:-cc}
if ! command -v "$cc" > /dev/null 2>&1; then
	skip all "no C compiler for the pty driver"; exit 0
fi
scratch_dir
drive=$work/ptydrive
if ! "$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -o "$drive" \
	tests/debugfs/ptydrive.c > "$work/cc.out" 2>&1; then
	fail build_driver "$(head -c 300 "$work/cc.out" | tr '\n' ' ')"
	exit 0
fi
export SOURCE_DATE_EPOCH=1700000000 LC_ALL=C TZ=UTC
src=$work/src
mkdir -p "$src/docs"
printf 'hello, tux3\n' > "$src/hello.txt"
printf 'readme\n' > "$src/docs/readme.md"
ln -s hello.txt "$src/link"
img=$work/vol.img
if ! "$mkfs" -q -d "$src" "$img" 16m > "$work/out" 2>&1; then
	fail mkfs "$(head -c 300 "$work/out" | tr '\n' ' ')"; exit 0
fi
home=$work/home
mkdir -p "$home"

# Run one session: drive SCRIPT; on failure show why.
session() {
	name=$1 script=$2
	shift 2
	HOME=$home TERM=dumb "$@" "$drive" -t 20 "$script" "$dbg" "$img" \
		> "$work/$name.out" 2>&1
	rc=$?
	if [ $rc = 77 ]; then
		skip "$name" "no pseudo-terminal"
		return 77
	elif [ $rc = 0 ]; then
		pass "$name"
	else
		fail "$name" "$(tail -c 700 "$work/$name.out" | tr '\n' '|')"
	fi
	return $rc
}

# ---- session 1: prompt, completion, history, help and the pager ----
cat > "$work/one" <<'EOF'
expect tux3debug: 
# a command name: "sup" completes to "super"
send sup\t\n
expect magic
expect seal
expect tux3debug: 
# a file inside the volume (completes with a space) ...
send cat /hel\t\n
expect cat /hello.txt
expect hello, tux3
expect tux3debug: 
# ... and a directory (completes with '/')
send ls /do\t\n
expect ls /docs/
expect readme.md
expect tux3debug: 
# help's argument is a command name
send help readl\t\n
expect usage: readlink
expect tux3debug: 
# field names of set_super and set_inode (then ^U clears the line)
send set_super vol\t
expect set_super volblocks
send \x15
send set_inode 63 mt\t
expect set_inode 63 mtime
send \x15
send readlink /link\n
expect hello.txt
expect tux3debug: 
send pwd\n
expect \n/\n
expect tux3debug: 
# history: the arrow key twice brings back "readlink /link"
send \e[A\e[A\n
expect readlink /link
expect hello.txt
expect tux3debug: 
# help is longer than the terminal: through $PAGER
send help\n
expect PAGED:Files:
expect PAGED:Snapshots:
expect PAGED:Shell:
expect tux3debug: 
# a short output is not paged
send help ls\n
expect \nusage: ls
expect tux3debug: 
send quit\n
wait 0
EOF
session session1 "$work/one" env PAGER='sed s/^/PAGED:/'
[ $? = 77 ] && exit 0

# ---- the history file ----
hist=$home/.tux3debug_history
if [ -f "$hist" ] && grep -qx 'readlink /link' "$hist" &&
   grep -qx 'super' "$hist" && grep -qx 'help ls' "$hist" &&
   [ "$(grep -cx 'readlink /link' "$hist")" = 2 ]; then
	pass history_file
else
	fail history_file "$(tr '\n' '|' < "$hist" 2>/dev/null)"
fi

# ---- session 2: history from the file; end of file leaves ----
cat > "$work/two" <<'EOF'
expect tux3debug: 
# the newest entries: quit, then help ls
send \e[A\e[A\n
expect usage: ls
expect tux3debug: 
send \x04
wait 0
EOF
session session2 "$work/two" env PAGER=

# ---- a failed command: reported, and the session's status is 1 ----
cat > "$work/three" <<'EOF'
expect tux3debug: 
send stat /nope\n
expect /nope: No such file or directory
expect tux3debug: 
send quit\n
wait 1
EOF
session failed_status "$work/three" env PAGER=
