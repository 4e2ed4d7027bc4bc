#!/bin/sh
# tux3debug commands against expected output: every tests/debugfs/NAME.cmd
# is run with -f on an image made by mkfs.tux3 -d from a small fixed tree
# (fixed contents, times, UUID and SOURCE_DATE_EPOCH, 1 KiB blocks, then
# owners, xattrs and device nodes set by a tux3debug -w script), and what
# it prints (stdout and stderr in order, then "[exit N]", then the host
# files the commands made) must equal NAME.expect.
#
# Header lines of a .cmd file:
#   # options: -w        tux3debug options (-w runs on a copy of the image)
#   # device: none       start without a volume (for open/close, help)
#   # needs: root        skipped unless run as root (owners, device nodes)
# Read-only cases share one image, which must stay bit-identical.
# Also: every command of the table is used by some case, and the man page
# lists every command and alias.
#
#   sh tests/scripts/debugfs_cmds.sh BUILD
#   TUX3_REGEN=1 sh tests/scripts/debugfs_cmds.sh BUILD   (rewrite .expect)
set -u
build=${1:-build}
top=$(pwd)
dbg=$top/$build/tux3debug
mkfs=$top/$build/mkfs.tux3
cases=$top/tests/debugfs
T=debugfs_cmds
. tests/scripts/lib/report.sh
if [ ! -x "$dbg" ] || [ ! -x "$mkfs" ]; then
	skip all "$dbg or $mkfs not built"; exit 0
fi
scratch_dir
export SOURCE_DATE_EPOCH=1700000000 LC_ALL=C TZ=UTC
unset PAGER TUX3DEBUG_PAGER
umask 022
first() { head -c 600 "$1" | tr '\n' ' '; }

# ---- the fixed tree ----
src=$work/src
mkdir -p "$src/docs/notes" "$src/bin"
printf 'hello, tux3\n' > "$src/hello.txt"
printf '# readme\n\nline two\n' > "$src/docs/readme.md"
printf 'a\n' > "$src/docs/notes/a.txt"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%c", (i * 7 + 3) % 256 }' \
	> "$src/bin/tool"
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "line %05d of big\n", i }' \
	> "$src/big.txt"
truncate -s 65536 "$src/sparse.img"
printf 'head' | dd of="$src/sparse.img" conv=notrunc 2>/dev/null
printf 'middle' | dd of="$src/sparse.img" bs=1 seek=40000 conv=notrunc \
	2>/dev/null
ln -s hello.txt "$src/link"
printf 'linked\n' > "$src/hard1"
ln "$src/hard1" "$src/docs/hard2"
mkfifo "$src/fifo"
: > "$src/empty"
printf 'x' > "$src/setuid"
printf 'spaced\n' > "$src/name with space"
chmod 644 "$src/hello.txt" "$src/docs/readme.md" "$src/docs/notes/a.txt" \
	"$src/big.txt" "$src/sparse.img" "$src/hard1" "$src/fifo" \
	"$src/empty" "$src/name with space"
chmod 755 "$src" "$src/docs" "$src/docs/notes" "$src/bin" "$src/bin/tool"
chmod 4755 "$src/setuid"
find "$src" -exec touch -h -d @1700000000 {} +

base=$work/base.img
if ! "$mkfs" -q -b 1024 -U 6a3e1c2e-0d1f-4b7a-9c55-2f6e4d8b1a00 -L fixture \
	-d "$src" "$base" 8m > "$work/out" 2>&1; then
	fail fixture "mkfs.tux3: $(first "$work/out")"; exit 0
fi
# Owners 0:0 whoever runs the test (and ctime from SOURCE_DATE_EPOCH),
# xattrs and device nodes that need no host support
cat > "$work/fixup" <<'EOF'
chown 0:0 /
chown 0:0 /hello.txt
chown 0:0 /docs
chown 0:0 /docs/readme.md
chown 0:0 /docs/notes
chown 0:0 /docs/notes/a.txt
chown 0:0 /docs/hard2
chown 0:0 /bin
chown 0:0 /bin/tool
chown 0:0 /big.txt
chown 0:0 /sparse.img
chown 0:0 /link
chown 0:0 /fifo
chown 0:0 /empty
chown 0:0 /setuid
chown 0:0 "/name with space"
delta
setxattr /hello.txt user.colour blue
setxattr /bin/tool user.bin 0x00ff10
mknod /null c 1 3
mknod /disk b 8 1
delta
EOF
if ! "$dbg" -w -f "$work/fixup" "$base" > "$work/out" 2>&1; then
	fail fixture "fixup: $(first "$work/out")"; exit 0
fi
pass fixture
chmod a-w "$base"
sum0=$(cksum < "$base")

# What a case left on the host, one line per path (for dump and rdump).
host_files() {
	( cd "$1" && find . -mindepth 1 ! -name vol.img ! -name '*.cmd' ! -name out \
		! -name host.txt ! -name host.bin | LC_ALL=C sort |
	while IFS= read -r p; do
		if [ -L "$p" ]; then
			echo "$p link -> $(readlink "$p")"
		elif [ -d "$p" ]; then
			echo "$p dir $(stat -c %a "$p")"
		elif [ -f "$p" ]; then
			echo "$p file $(stat -c '%a %s' "$p") $(cksum < "$p")"
		else
			echo "$p $(stat -c '%F %a' "$p")"
		fi
	done )
}

uid=$(id -u)
for cmd in "$cases"/*.cmd; do
	[ -e "$cmd" ] || continue
	name=$(basename "$cmd" .cmd)
	opts=$(sed -n 's/^# options: //p' "$cmd" | head -1)
	device=vol.img
	grep -q '^# device: none' "$cmd" && device=
	if grep -q '^# needs: root' "$cmd" && [ "$uid" != 0 ]; then
		skip "$name" "needs root (owners, device nodes)"
		continue
	fi
	run=$work/run-$name
	mkdir -p "$run"
	cp "$cmd" "$run/"
	printf 'a host file\n' > "$run/host.txt"
	awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%c", i % 251 }' \
		> "$run/host.bin"
	touch -d @1700000000 "$run/host.txt" "$run/host.bin"
	case " $opts " in
	*" -w "*) cp --sparse=always "$base" "$run/vol.img"
		  chmod u+w "$run/vol.img" ;;
	*) ln -s "$base" "$run/vol.img" ;;
	esac
	( cd "$run" && "$dbg" $opts -f "$name.cmd" $device > out 2>&1
	  echo "[exit $?]" >> out )
	files=$(host_files "$run")
	if [ -n "$files" ]; then
		echo "[host files]" >> "$run/out"
		echo "$files" >> "$run/out"
	fi
	if [ -n "${TUX3_REGEN:-}" ]; then
		cp "$run/out" "$cases/$name.expect"
		pass "$name"
	elif [ ! -e "$cases/$name.expect" ]; then
		fail "$name" "no $name.expect (TUX3_REGEN=1 makes it)"
	elif cmp -s "$run/out" "$cases/$name.expect"; then
		pass "$name"
	else
		fail "$name" "$(diff -u "$cases/$name.expect" "$run/out" |
			sed -n '3,14p' | tr '\n' '|')"
	fi
done

# ---- read-only cases left the image as it was ----
if [ "$(cksum < "$base")" = "$sum0" ]; then
	pass readonly_identical
else
	fail readonly_identical "the shared image changed"
fi

# ---- the --json outputs are JSON ----
if command -v python3 > /dev/null 2>&1; then
	bad=
	for c in "stat --json /hello.txt" "stat --json /null" \
		 "ls -l --json /" "super --json" "extents --json /sparse.img"; do
		"$dbg" -R "$c" "$base" > "$work/json" 2>&1 &&
		python3 -c 'import json, sys; json.load(open(sys.argv[1]))' \
			"$work/json" 2> /dev/null || bad="$bad [$c]"
	done
	if [ -z "$bad" ]; then
		pass json_valid
	else
		fail json_valid "not JSON:$bad"
	fi
else
	skip json_valid "needs python3"
fi

# ---- a script that cannot be read: a message and exit 1 ----
mkdir "$work/dir.cmd"
for how in file stdin; do
	if [ $how = file ]; then
		name=$work/dir.cmd
		"$dbg" -f "$work/dir.cmd" "$base" > "$work/out" 2>&1
	else
		name=stdin
		"$dbg" -f - "$base" < "$work/dir.cmd" > "$work/out" 2>&1
	fi
	rc=$?
	if [ $rc = 1 ] && [ "$(cat "$work/out")" = \
	     "tux3debug: $name: cannot read: Is a directory" ]; then
		pass script_directory_$how
	else
		fail script_directory_$how "exit $rc: $(first "$work/out")"
	fi
done
"$dbg" -f "$work/no-such.cmd" "$base" > "$work/out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "no-such.cmd: No such file" "$work/out"; then
	pass script_missing
else
	fail script_missing "exit $rc: $(first "$work/out")"
fi

# ---- output that cannot be written: a message and exit 1 ----
if [ -w /dev/full ]; then
	for c in super "manifest /"; do
		"$dbg" -R "$c" "$base" > /dev/full 2> "$work/out"
		rc=$?
		if [ $rc = 1 ] &&
		   grep -q "^tux3debug: standard output: write failed" "$work/out"
		then
			pass "stdout_full/${c%% *}"
		else
			fail "stdout_full/${c%% *}" "exit $rc: $(first "$work/out")"
		fi
	done
else
	skip stdout_full "no /dev/full"
fi

# ---- rdump of a directory chain deeper than a recursive walk survives ----
# 4000 levels (mkfs.tux3 -d follows 4096); the host paths pass PATH_MAX,
# so the tree is made and read back 1000 levels at a time.
levels=4000
chain=$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "d/" }')
deep=$work/deep
if ( mkdir -p "$deep/src" && cd "$deep/src" &&
     for k in 1 2 3 4; do mkdir -p "$chain" && cd -P "$chain" || exit 1; done &&
     printf 'bottom\n' > leaf ) &&
   "$mkfs" -q -d "$deep/src" "$deep/v.img" 32m > "$work/out" 2>&1; then
	"$dbg" -R "rdump / $deep/out" "$deep/v.img" > "$work/out" 2>&1
	rc=$?
	dirs=$(find "$deep/out" -type d | wc -l)
	leaves=$(find "$deep/out" -mindepth $((levels + 1)) \
		-maxdepth $((levels + 1)) -type f -name leaf | wc -l)
	modes=$(find "$deep/out" -mindepth 1 -type d ! -perm 755 | wc -l)
	leaf=$(cd "$deep/out" && for k in 1 2 3 4; do cd -P "$chain" || exit 1
	       done && cat leaf)
	if [ $rc = 0 ] && [ ! -s "$work/out" ] && [ "$dirs" = $((levels + 1)) ] &&
	   [ "$leaves" = 1 ] && [ "$modes" = 0 ] && [ "$leaf" = bottom ]; then
		pass rdump_deep
	else
		fail rdump_deep "exit $rc, $dirs directories, $leaves leaf,\
 $modes modes wrong, leaf '$leaf': $(first "$work/out")"
	fi
else
	fail rdump_deep "cannot make the tree: $(first "$work/out")"
fi
rm -rf "$deep"

# ---- find and rdump of directories wider than a read batch (256) ----
# Entries are read a batch at a time (debugfs/dirbatch.c): every entry of
# a 1,500-entry directory with subdirectories among the files must come
# out once, in a walk that resumes the directory after each subtree; 300
# hard links (rdump's table of first paths grows past its first size)
# come out as links.
wide=$work/wide
if mkdir -p "$wide/src/w" && ( cd "$wide/src/w" &&
	i=0; while [ $i -lt 1500 ]; do
		if [ $((i % 97)) = 0 ]; then
			mkdir "sub$i" && : > "sub$i/a" && : > "sub$i/b"
		else
			printf '%s\n' "$i" > "f$i"
		fi
		i=$((i + 1))
	done &&
	i=1; while [ $i -le 303 ]; do	# 97, 194, 291 are directories
		[ $((i % 97)) = 0 ] || ln "f$i" "sub0/h$i" || exit 1
		i=$((i + 1))
	done ) &&
   "$mkfs" -q -d "$wide/src" "$wide/v.img" 16m > "$work/out" 2>&1; then
	"$dbg" -R "find /w" "$wide/v.img" 2> "$work/out" | sort > "$wide/got"
	( cd "$wide/src" && find w | sed 's|^|/|' ) |
		sort > "$wide/want"
	n=$(wc -l < "$wide/got")
	if [ ! -s "$work/out" ] && [ "$n" = 1833 ] &&
	   cmp -s "$wide/got" "$wide/want"; then
		pass find_wide
	else
		fail find_wide "$n paths: $(first "$work/out")"
	fi
	"$dbg" -R "rdump /w $wide/out" "$wide/v.img" > "$work/out" 2>&1
	rc=$?
	linked=$(find "$wide/out/w" -type f -links 2 | wc -l)
	if [ $rc = 0 ] && [ ! -s "$work/out" ] && [ "$linked" = 600 ] &&
	   diff -r "$wide/src/w" "$wide/out/w" > "$work/diff" 2>&1; then
		pass rdump_wide
	else
		fail rdump_wide "exit $rc, $linked linked: $(first "$work/out")\
 $(first "$work/diff")"
	fi
else
	fail find_wide "cannot make the tree: $(first "$work/out")"
fi
rm -rf "$wide"

# ---- rdump into a directory with a default ACL ----
# A default ACL, not the umask, gives a new file its mode, so rdump must
# not take the mode it asked for as the mode it got: with "other::---"
# a file asked for as 0644 is made 0640, and rdump must chmod it.
acl=$work/acl
mkdir -p "$acl/out"
if python3 - "$acl/out" <<'PY' 2>/dev/null
import os, struct, sys
# version 2; USER_OBJ rwx, GROUP_OBJ r-x, OTHER ---
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, 0xffffffff)
      for t, p in ((0x01, 7), (0x04, 5), (0x20, 0)))
os.setxattr(sys.argv[1], "system.posix_acl_default", acl)
PY
then
	"$dbg" -R "rdump /hello.txt $acl/out" "$base" > "$work/out" 2>&1
	rc=$?
	mode=$(stat -c %a "$acl/out/hello.txt" 2>/dev/null)
	if [ $rc = 0 ] && [ "$mode" = 644 ]; then
		pass rdump_default_acl
	else
		fail rdump_default_acl "exit $rc, mode $mode: $(first "$work/out")"
	fi
else
	skip rdump_default_acl "the host file system takes no default ACL"
fi
rm -rf "$acl"

# ---- icheck against the reference dump tool's block maps ----
# Each oracle image's blockmap ("BLOCK TYPE", "BLOCK L(C) inum-N-extent")
# says who owns each metadata block and the first block of each extent.
if [ -z "${TUX3_ORACLE_DIR:-}" ] || [ -z "${TUX3_ORACLE_SRC:-}" ]; then
	skip oracle_icheck "oracle images absent (TUX3_ORACLE_DIR)"
else
	for img in "$TUX3_ORACLE_DIR"/*.img; do
		[ -e "$img" ] || continue
		o=$(basename "$img" .img)
		map=$TUX3_ORACLE_SRC/$o.blockmap.txt.zst
		[ -e "$map" ] || continue
		zstd -q -d -c "$map" > "$work/map" 2>/dev/null || continue
		# icheck 50 blocks a line (the shell takes 63 words)
		awk '{ printf "%s%s", (NR % 50 == 1 ? "icheck" : ""), " " $1;
		       if (NR % 50 == 0) print "" } END { print "" }' \
			"$work/map" > "$work/icheck"
		"$dbg" -f "$work/icheck" "$img" > "$work/owners" 2>&1
		why=$(awk '
			NR == FNR { own[$1] = own[$1] "|" $0; next }
			{
				b = $1; t = $NF; want = ""
				if (t == "logblock") want = "log block [0-9]+ of the chain"
				else if (t == "itree-leaf") want = "inode table ileaf"
				else if (t == "itree-bnode") want = "inode table bnode"
				else if (t ~ /^inum-[0-9]+-leaf$/) {
					split(t, p, "-"); want = "inode " p[2] " dtree dleaf"
				} else if (t ~ /^inum-[0-9]+-extent$/) {
					split(t, p, "-"); split($2, l, "(")
					want = "inode " p[2] "( \\([a-z ]+\\))? data, " \
					       "logical block " l[1] "$"
				}
				if (want == "" || own[b] !~ ("\\|" b " +" want)) {
					print b " " t ": got " own[b]; exit
				}
			}' "$work/owners" "$work/map")
		if [ -z "$why" ]; then
			pass "oracle_icheck/$o"
		else
			fail "oracle_icheck/$o" "$why"
		fi
	done
fi

# ---- every command has a case, and the man page lists each ----
"$dbg" -R "help -n" > "$work/names" 2>&1
missing=
while read -r name aliases; do
	grep -q "^$name\\b" "$cases"/*.cmd || missing="$missing $name"
done < "$work/names"
if [ -s "$work/names" ] && [ -z "$missing" ]; then
	pass every_command_tested
else
	fail every_command_tested "no case runs:$missing"
fi
man=$top/doc/tux3debug.8
# the headings of the entries (the line after .TP) and their alias lists
awk 'prev == ".TP" { print } { prev = $0 }' "$man" > "$work/headings"
awk '/^Alias(es)?:$/ { f = 1; next } f && /^\.br$/ { f = 0 } f' "$man" \
	> "$work/aliases"
missing=
while read -r name aliases; do
	grep -q "^\\.B[IR]* \"*$name\\( \\|\"\\|\$\\)" "$work/headings" ||
		missing="$missing $name"
	for a in $aliases; do
		grep -q "^\\.BR* $a\\( \\|\$\\)" "$work/aliases" ||
			missing="$missing $a"
	done
done < "$work/names"
if [ -s "$work/names" ] && [ -z "$missing" ]; then
	pass man_page_lists_every_command
else
	fail man_page_lists_every_command "doc/tux3debug.8 lacks:$missing"
fi
