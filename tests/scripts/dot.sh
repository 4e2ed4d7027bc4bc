#!/bin/sh
# tux3dot checks:   sh tests/scripts/dot.sh BUILD
#   dot/count/NAME        with --max-nodes large enough that nothing is
#                         summarised, the nodes per kind and the edges per
#                         pair of kinds of the .dot (read back with
#                         libcgraph by tests/dotcount) equal what the walker
#                         visits (dotcount --walk): an empty volume, the
#                         oracle volumes ($TUX3_ORACLE_DIR), /usr/include
#   dot/summary/NAME      default --max-nodes: at most 400 nodes drawn
#                         (summaries, legend and errors aside), and drawn +
#                         the counts the summary nodes name = the walker's
#   dot/depth             --depth 0: only the itree root, the rest in one
#                         summary that adds up
#   dot/stable            two runs give identical .dot
#   dot/readonly          the image's sha256 is unchanged by all the runs
#   dot/format/svg|png|pdf|ext   rendered in process (-T, or -o's extension)
#   dot/inode, dot/path, dot/path-missing   one file only
#   dot/output/...        -o to a missing directory or /dev/full (each
#                         format), standard output full: exit 8, a message
#   dot/tree/WHAT         each --tree value draws its kinds and no other
#   dot/usage/...         bad options exit 8 with the usage
#   dot/open-fail         the only ileaf overwritten: replay fails, the
#                         on-disk trees are drawn with an error node, exit 1
#   dot/open-none         no Tux3 superblock: exit 8, a message
#   dot/corrupt/...       damaged variants (tests/corrupt): error nodes,
#                         exit 1, never a crash
#   dot/stale             small-delta (log not unified): stale bitmap
#                         drawn dashed, explained by the legend
set -u
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
dot=$build/tux3dot
cnt=$build/tests/dotcount
mkfs=$build/mkfs.tux3
dbg=$build/tux3debug
corrupt=$build/tests/corrupt
T=dot

for x in "$dot" "$cnt" "$mkfs" "$dbg"; do
	if [ ! -x "$x" ]; then
		echo "FAIL $T/all: $x not built"
		exit 1
	fi
done
scratch_dir
BIG=10000000

# The count lines of a .dot that the walker also gives
dot_counts() {
	"$cnt" "$1" | grep -v -e '^nodes legend' -e '^nodes more' \
		-e '^nodes total' -e '^summar' -e ' more' -e ' legend'
}
walk_counts() {
	"$cnt" --walk "$1" | grep -v '^nodes total'
}

# count NAME IMAGE: full drawing against the walker
count() {
	out=$work/full.dot
	"$dot" --max-nodes $BIG -o "$out" "$2" 2>"$work/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail count/$1 "exit $rc: $(head -1 "$work/err")"
		return
	fi
	dot_counts "$out" > "$work/d"
	walk_counts "$2" > "$work/w"
	if ! "$cnt" "$out" | grep -q '^summaries 0$'; then
		fail count/$1 "something was summarised"
	elif ! diff "$work/d" "$work/w" > "$work/diff"; then
		fail count/$1 "$(tr '\n' ' ' < "$work/diff" | cut -c1-200)"
	else
		pass count/$1
	fi
}

# summary NAME IMAGE [OPTIONS]: drawn + summarised = walked; budget kept
summary() {
	name=$1 img=$2
	shift 2
	out=$work/sum.dot
	if ! "$dot" "$@" -o "$out" "$img" 2>"$work/err"; then
		fail summary/$name "tux3dot failed: $(head -1 "$work/err")"
		return
	fi
	"$cnt" "$out" > "$work/c"
	walk_counts "$img" | grep '^nodes' > "$work/w"
	drawn=$(awk '$1 == "nodes" && $2 != "legend" && $2 != "more" &&
		$2 != "total" && $2 != "error" { s += $3 } END { print s + 0 }' \
		"$work/c")
	max=400
	for a in "$@"; do
		case $prev in --max-nodes) max=$a ;; esac
		prev=$a
	done
	prev=
	bad=
	[ "$drawn" -le "$max" ] || bad="$drawn nodes drawn, more than $max"
	# per kind: drawn + summarised equals the walker's count
	while read -r _ kind n; do
		[ "$kind" = total ] && continue
		d=$(awk -v k="$kind" '$1 == "nodes" && $2 == k { print $3 }' \
			"$work/c")
		s=$(awk -v k="$kind" '$1 == "summarised" && $2 == k { print $3 }' \
			"$work/c")
		if [ $(( ${d:-0} + ${s:-0} )) -ne "$n" ]; then
			bad="$bad $kind: drawn ${d:-0} + summarised ${s:-0} != $n"
		fi
	done < "$work/w"
	grep -q '^summarised unknown' "$work/c" &&
		bad="$bad unreadable summary label"
	if [ -n "$bad" ]; then
		fail summary/$name "$bad"
	else
		pass summary/$name
	fi
}
prev=

# node_attrs NAME FILE: the statement of node NAME in the dot text
node_attrs() {
	sed -n "/^	$1	\[/,/\];\$/p" "$2"
}

# ---- volumes ----
empty=$work/empty.img
"$mkfs" -q "$empty" 64m || { fail mkfs "mkfs.tux3 failed"; exit 0; }
count empty "$empty"
# a volume with a version table: the version tree drawn node for node
if [ -x "$build/tests/mkvtable" ]; then
	cp "$empty" "$work/versions.img"
	if "$build/tests/mkvtable" "$work/versions.img" ok >/dev/null 2>&1; then
		count versions "$work/versions.img"
		cp "$empty" "$work/vfile.img"
		"$build/tests/mkvtable" "$work/vfile.img" vfile >/dev/null 2>&1 &&
			count versioned-file "$work/vfile.img"
		"$dot" --tree versions "$work/versions.img" > "$work/v.dot" 2>&1
		if grep -q "version 2: 'tuesday' (tag 8)" "$work/v.dot" &&
		   grep -q 'version_1 -> version_2' "$work/v.dot"; then
			pass versions-tree
		else
			fail versions-tree "$(head -3 "$work/v.dot")"
		fi
		# one file's data by version: the live version's rewrite, the
		# snapshot's old block, tuesday's hole
		"$dot" --tree versions --path /versioned "$work/vfile.img" \
			> "$work/vf.dot" 2>&1
		if grep -q 'its data by version' "$work/vf.dot" &&
		   grep -q 'blocks 1-1: version 1 -> ' "$work/vf.dot" &&
		   grep -q 'blocks 2-2: version 2 -> hole' "$work/vf.dot" &&
		   grep -q "version 2: 'tuesday'" "$work/vf.dot"; then
			pass versions-file
		else
			fail versions-file "$(grep label "$work/vf.dot" | head -3 | tr '\n' ' ')"
		fi
	else
		fail count/versions "mkvtable failed"
	fi
fi

oracle=
if [ -n "${TUX3_ORACLE_DIR:-}" ] && [ -d "$TUX3_ORACLE_DIR" ]; then
	oracle=$TUX3_ORACLE_DIR
	for n in small-unified small-delta orphan tree-fuse empty-1k \
		 empty-512 empty-16k corrupt-bitmap; do
		if [ -e "$oracle/$n.img" ]; then
			count $n "$oracle/$n.img"
		else
			skip count/$n "$oracle/$n.img missing"
		fi
	done
else
	skip count/oracle "TUX3_ORACLE_DIR unset"
fi

inc=$work/include.img
src=/usr/include/linux
[ -d /usr/include ] && src=/usr/include
if [ -d "$src" ] && "$mkfs" -q -d "$src" "$inc" 512m 2>"$work/err"; then
	count usr-include "$inc"
	summary usr-include "$inc"
	summary usr-include-100 "$inc" --max-nodes 100
else
	skip count/usr-include "no /usr/include or mkfs -d failed"
	inc=
fi
if [ -n "$oracle" ] && [ -e "$oracle/tree-fuse.img" ]; then
	tf=$oracle/tree-fuse.img
	summary tree-fuse "$tf"
	# --depth 0: the root bnode, what hangs from sb, one summary
	summary depth "$tf" --depth 0
	"$dot" --depth 0 "$tf" > "$work/d0.dot"
	if grep -q '^	ileaf_' "$work/d0.dot" ||
	   ! grep -q '^	more_bnode_' "$work/d0.dot"; then
		fail depth "ileaves drawn or no summary under the root bnode"
	else
		pass depth
	fi
else
	skip depth "TUX3_ORACLE_DIR unset"
fi

# the image used for the option checks: the richest at hand
img=${inc:-$empty}
sum_before=$(sha256sum < "$img")

# ---- stable names ----
"$dot" -o "$work/s1.dot" "$img" && "$dot" -o "$work/s2.dot" "$img"
if cmp -s "$work/s1.dot" "$work/s2.dot" && [ -s "$work/s1.dot" ]; then
	pass stable
else
	fail stable "two runs differ"
fi

# ---- formats ----
small=${oracle:+$oracle/small-delta.img}
small=${small:-$empty}
"$dot" -T svg -o "$work/x.svg" "$small" && head -c 400 "$work/x.svg" |
	grep -q -e '<?xml' -e '<svg' && pass format/svg ||
	fail format/svg "no SVG written"
"$dot" -T png "$small" > "$work/x.png" &&
	[ "$(head -c 4 "$work/x.png" | od -An -c | tr -d ' ')" = '211PNG' ] &&
	pass format/png || fail format/png "no PNG magic"
"$dot" -T pdf -o "$work/x.pdf" "$small" &&
	[ "$(head -c 4 "$work/x.pdf")" = "%PDF" ] && pass format/pdf ||
	fail format/pdf "no %PDF"
"$dot" -o "$work/y.svg" "$small" && grep -q '<svg' "$work/y.svg" &&
	"$dot" -T dot -o "$work/y2.svg" "$small" &&
	grep -q '^digraph' "$work/y2.svg" && pass format/ext ||
	fail format/ext "-o x.svg is not SVG, or -T dot did not win"

# ---- output that cannot be written: exit 8, the path named ----
"$dot" -T svg -o "$work/no-dir/x.svg" "$small" 2>"$work/err"
rc=$?
[ $rc -eq 8 ] && grep -q "no-dir/x.svg: No such file" "$work/err" &&
	pass output/unwritable || fail output/unwritable "exit $rc: $(head -1 "$work/err")"
if [ -w /dev/full ]; then
	for f in dot svg png; do
		"$dot" -T $f -o /dev/full "$small" 2>"$work/err"
		rc=$?
		[ $rc -eq 8 ] && grep -q "/dev/full: write failed" "$work/err" &&
			pass output/full-$f ||
			fail output/full-$f "exit $rc: $(head -1 "$work/err")"
	done
	"$dot" -T svg "$small" > /dev/full 2>"$work/err"
	rc=$?
	[ $rc -eq 8 ] && grep -q "standard output: write failed" "$work/err" &&
		pass output/full-stdout ||
		fail output/full-stdout "exit $rc: $(head -1 "$work/err")"
else
	skip output/full "no /dev/full"
fi

# ---- one file ----
"$dot" --max-nodes $BIG --inode 63 -o "$work/i.dot" "$img"
rc=$?
"$cnt" "$work/i.dot" > "$work/ic"
if [ $rc -eq 0 ] && grep -q '^nodes inode 1$' "$work/ic" &&
   grep -q '^nodes dir 1$' "$work/ic" && ! grep -q '^nodes sb' "$work/ic" &&
   grep -q '^	inode_63' "$work/i.dot"; then
	pass inode
else
	fail inode "exit $rc, or not just inode 63 and its entries"
fi
if [ -n "$inc" ]; then
	p=/linux/fs.h
	[ "$src" = /usr/include/linux ] && p=/fs.h
	"$dot" --path "$p" -o "$work/p.dot" "$img"
	rc=$?
	if [ $rc -eq 0 ] && [ "$("$cnt" "$work/p.dot" |
	     awk '$1 == "nodes" && $2 == "inode" { print $3 }')" = 1 ] &&
	   ! grep -q '^	sb' "$work/p.dot" &&
	   grep -q 'regular file' "$work/p.dot"; then
		pass path
	else
		fail path "exit $rc, or not one regular file"
	fi
else
	skip path "no populated volume"
fi
"$dot" --path /no/such/file "$img" > /dev/null 2>"$work/err"
rc=$?
[ $rc -eq 8 ] && grep -q '/no/such/file: no such file or directory' \
	"$work/err" && ! grep -q Success "$work/err" && pass path-missing ||
	fail path-missing "exit $rc: $(head -1 "$work/err")"

# ---- --tree ----
# tree WHAT MUST-HAVE MUST-NOT-HAVE (name prefixes)
tree() {
	"$dot" --max-nodes $BIG --tree "$1" -o "$work/t.dot" "$img" \
		2>"$work/err"
	rc=$?
	"$cnt" "$work/t.dot" > "$work/tc" 2>/dev/null
	bad=
	[ $rc -eq 0 ] || bad="exit $rc"
	for k in $2; do
		grep -q "^nodes $k " "$work/tc" || bad="$bad no $k"
	done
	for k in $3; do
		grep -q "^nodes $k " "$work/tc" && bad="$bad has $k"
	done
	[ -z "$bad" ] && pass tree/$1 || fail tree/$1 "$bad"
}
tree all "sb log ileaf inode dir atoms bitmap version" ""
tree itree "sb ileaf inode" "log dir dleaf atoms bitmap version"
tree files "sb inode dir" "log ileaf atoms bitmap version"
tree log "sb log" "ileaf inode dir atoms bitmap version"
tree atoms "sb atoms" "log ileaf inode dir bitmap version"
tree bitmap "sb bitmap" "log ileaf inode dir atoms version"
tree versions "sb version" "log ileaf inode dir atoms bitmap"
if grep -q 'version 0: live (the origin), no snapshots' "$work/t.dot"; then
	pass tree/versions-label
else
	fail tree/versions-label "no \"version 0: live (the origin), no snapshots\""
fi

# ---- usage ----
usage() {
	name=$1
	shift
	"$dot" "$@" > /dev/null 2>"$work/err"
	rc=$?
	if [ $rc -eq 8 ] && grep -q '^usage:' "$work/err"; then
		pass usage/$name
	else
		fail usage/$name "exit $rc"
	fi
}
usage no-device
usage two-devices "$img" "$img"
usage bad-format -T gif "$img"
usage bad-tree --tree forest "$img"
usage bad-depth --depth x "$img"
usage zero-max-nodes --max-nodes 0 "$img"
usage bad-inode --inode abc "$img"
usage blank-sign-inode --inode " -5" "$img"
usage blank-max-nodes --max-nodes " 7" "$img"
usage blank-depth --depth " 1" "$img"
usage inode-and-path --inode 63 --path / "$img"
usage unknown-option --frobnicate "$img"
"$dot" "$work/no-such.img" > /dev/null 2>"$work/err"
rc=$?
[ $rc -eq 8 ] && [ -s "$work/err" ] && pass usage/missing-device ||
	fail usage/missing-device "exit $rc"

# ---- read-only ----
if [ "$(sha256sum < "$img")" = "$sum_before" ]; then
	pass readonly
else
	fail readonly "the image changed"
fi

# ---- corrupt images ----
# random bytes over block 63 (the only ileaf) of a fresh volume: the
# library cannot open it (the itree holds the bitmap inode)
cp "$empty" "$work/c63.img"
head -c 4096 /dev/urandom | dd of="$work/c63.img" bs=4096 seek=63 \
	conv=notrunc status=none
"$dot" -o "$work/c63.dot" "$work/c63.img" 2>"$work/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'log not replayed' "$work/c63.dot" &&
   grep -q 'bad magic' "$work/c63.dot" && grep -q 'without replay' "$work/err"; then
	pass open-fail
else
	fail open-fail "exit $rc (want 1, the volume drawn without replay)"
fi
# an image that is no volume at all cannot be drawn: exit 8
head -c 1048576 /dev/zero > "$work/zero.img"
"$dot" -o "$work/zero.dot" "$work/zero.img" 2>"$work/err"
rc=$?
if [ $rc -eq 8 ] && [ -s "$work/err" ]; then
	pass open-none
else
	fail open-none "exit $rc"
fi
# variants of a small populated volume made by tests/corrupt: the root
# directory's inode, attributes, data and entries, the atom table, and the
# ileaf of the last inode (in the middle of the inode table: the open
# needs the first ileaf, which holds the bitmap inode)
lin=$work/linux.img
if [ -x "$corrupt" ] && [ -d /usr/include/linux ] &&
   "$mkfs" -q -d /usr/include/linux "$lin" 64m 2>/dev/null; then
	last=$("$dot" --max-nodes $BIG --tree itree "$lin" |
		sed -n 's/^	inode_\([0-9]*\).*/\1/p' | tail -1)
	mkdir -p "$work/cv" "$work/cvi"
	"$corrupt" -c attr,dleaf,dir,atom "$lin" "$work/cv" >/dev/null 2>&1
	"$corrupt" -t "<$last>" -c ileaf "$lin" "$work/cvi" >/dev/null 2>&1
	cat "$work/cv/list" "$work/cvi/list" 2>/dev/null |
		sed "s#^#$work/cv/#" > "$work/cvlist"
	sed -i "s#^$work/cv/\(ileaf\)#$work/cvi/\1#" "$work/cvlist"
	if [ -s "$work/cvlist" ]; then
		bad= n1=0
		while IFS='	' read -r v _ _; do
			"$dot" -o "$v.dot" "$v.img" 2>"$v.err"
			rc=$?
			case $rc in
			0) ;;
			1) n1=$((n1 + 1))
			   grep -q '^	error_' "$v.dot" ||
				bad="$bad ${v##*/}(exit 1 without error node)" ;;
			8) [ -s "$v.err" ] ||
				bad="$bad ${v##*/}(exit 8 silent)" ;;
			*) bad="$bad ${v##*/}(exit $rc)" ;;
			esac
		done < "$work/cvlist"
		if [ -n "$bad" ]; then
			fail corrupt/variants "$bad"
		elif [ $n1 -eq 0 ]; then
			fail corrupt/variants "no variant drawn with error nodes"
		else
			pass corrupt/variants
		fi
		f=$work/cvi/ileaf-bad-magic.dot
		if [ -e "$f" ] && grep -q 'bad ileaf at block' "$f" &&
		   grep -q -- '-> error_0' "$f" && grep -q '^	inode_63' "$f"
		then
			pass corrupt/ileaf
		else
			fail corrupt/ileaf "no \"bad ileaf at block\" error node"
		fi
	else
		skip corrupt/variants "tests/corrupt wrote no variant"
	fi
else
	skip corrupt/variants "tests/corrupt not built or no /usr/include/linux"
fi

# ---- stale ----
if [ -n "$oracle" ] && [ -e "$oracle/small-delta.img" ]; then
	"$dot" -o "$work/sd.dot" "$oracle/small-delta.img"
	if node_attrs bitmap_0 "$work/sd.dot" | grep -q 'dashed' &&
	   grep -q 'legend_stale' "$work/sd.dot"; then
		pass stale/small-delta
	else
		fail stale/small-delta "bitmap not drawn stale, or no legend"
	fi
	"$dot" -o "$work/tf.dot" "$oracle/tree-fuse.img"
	if node_attrs bnode_5 "$work/tf.dot" | grep -q 'dashed'; then
		pass stale/tree-fuse
	else
		fail stale/tree-fuse "replayed bnode 5 not drawn stale"
	fi
else
	skip stale "TUX3_ORACLE_DIR unset"
fi

# ---- the directory index (DIR_INDEX, format.md 15.5): its summary in
# the directory's node, as tux3debug htree gives it ----
mkdir -p "$work/dx/big"
i=1
while [ $i -le 400 ]; do
	: > "$work/dx/big/a-name-long-enough-to-fill-blocks-$i"
	i=$((i + 1))
done
if "$mkfs" -q -O dir_index -d "$work/dx" "$work/dx.img" 8m 2>"$work/err" &&
   "$dot" --path /big -o "$work/dx.dot" "$work/dx.img" 2>>"$work/err"; then
	pairs=$("$dbg" -R "htree /big" "$work/dx.img" |
		sed -n 's/^buckets: \([0-9]*\), pairs: \([0-9]*\) .*/\1 buckets, \2 pairs/p')
	if [ -n "$pairs" ] && grep -q "index: depth" "$work/dx.dot" &&
	   grep -q "index: $pairs" "$work/dx.dot"; then
		pass dir-index
	else
		fail dir-index "no index summary ($pairs) in dir node: $(grep -o 'index: [^\\]*' "$work/dx.dot" | head -2 | tr '\n' ' ')"
	fi
	# without the feature: no index line
	"$mkfs" -q -d "$work/dx" "$work/dx2.img" 8m 2>"$work/err" &&
	"$dot" --path /big -o "$work/dx2.dot" "$work/dx2.img" 2>>"$work/err"
	if grep -q "index:" "$work/dx2.dot"; then
		fail dir-index-none "an index drawn on a volume without dir_index"
	else
		pass dir-index-none
	fi
else
	fail dir-index "mkfs or tux3dot failed: $(head -2 "$work/err")"
fi

# ---- versioned attributes: each labelled by its version, the ABSENT
# marker by name (not the 2014 format's RESERVED1), and a legend entry ----
mkdir -p "$work/va"
echo hello > "$work/va/a"
echo other > "$work/va.note"
if "$mkfs" -q -d "$work/va" "$work/va.img" 16m 2>"$work/err" &&
   printf 'snapshot create mon\nwrite -f %s /a\ndelta\nsnapshot create tue\nrm /a\n' \
	"$work/va.note" | "$dbg" -w -f - "$work/va.img" > "$work/out" 2>&1 &&
   "$dot" -o "$work/va.dot" "$work/va.img" 2>>"$work/err"; then
	flat=$(tr -d '\n' < "$work/va.dot" | sed 's/\\[[:space:]]*//g')
	if echo "$flat" | grep -q 'ABSENT@[0-9]' &&
	   echo "$flat" | grep -q 'MODE_OWNER@[0-9]' &&
	   ! echo "$flat" | grep -q RESERVED1 &&
	   grep -q legend_versions "$work/va.dot"; then
		pass versioned-attrs
	else
		fail versioned-attrs "attributes not labelled by version: $(echo "$flat" | grep -o 'attrs: [^"]*' | head -3 | tr '\n' ' ')"
	fi
else
	fail versioned-attrs "setup failed: $(head -2 "$work/err" "$work/out")"
fi
