#!/bin/sh
# libtux3 as a shared library (BUILD/libtux3.so.1):
#   library/soname      its soname is libtux3.so.1, the interface version
#   library/exports     it exports tux3_* symbols only, in version nodes
#                       TUX3_1 and its successors TUX3_1.N
#   library/api         every function the public headers declare is exported
#   library/symbols-file  debian/libtux3-1.symbols names exactly the exports,
#                       each in its version node
#   library/tools-link  the tools load it (NEEDED libtux3.so.1), unless
#                       built with STATIC=1
#   library/TOOL-mismatch  each tool refuses to run when the library it
#                       loads reports another interface version
#                       (tux3_library_version() interposed by a preloaded
#                       shim) with its documented status, and runs
#                       without the shim
#   library/mismatch-every-tool  every program of BUILD that loads
#                       libtux3.so.1 has its TOOL-mismatch check here
set -u
T=library
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)
so=$build/libtux3.so.1

require_tools cc nm readelf
if [ ! -f "$so" ]; then
	skip all "no $so"
	exit 0
fi
scratch_dir

soname=$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libtux3.so.1 ] && pass soname || fail soname "soname '$soname'"

nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' |
	sort -u > "$work/exports"
others=$(grep -v '^tux3_' "$work/exports" | grep -v '^TUX3_1\(\.[0-9]*\)\?$' |
	head -5 | tr '\n' ' ')
nm -D --defined-only --with-symbol-versions "$so" 2>/dev/null |
	awk '$3 ~ /^tux3_/ { sub(/@@/, "@", $3); print $3 }' |
	sort -u > "$work/versioned"
unversioned=$(grep -v '@TUX3_1\(\.[0-9]*\)\?$' "$work/versioned" | head -3 |
	tr '\n' ' ')
if [ -z "$others" ] && [ -z "$unversioned" ] &&
   [ "$(grep -c '^tux3_' "$work/exports")" -gt 50 ]; then
	pass exports
else
	fail exports "not tux3_*: $others; outside TUX3_1: $unversioned"
fi

# debian/libtux3-1.symbols lists exactly the exports (dpkg-gensymbols
# would only warn about a new one, and a package build is rare)
symfile=$top/debian/libtux3-1.symbols
if [ -f "$symfile" ]; then
	sed -n 's/^ \(tux3_[a-z0-9_]*@TUX3_1[.0-9]*\) .*/\1/p' "$symfile" |
		sort -u > "$work/listed"
	if cmp -s "$work/listed" "$work/versioned"; then
		pass symbols-file
	else
		fail symbols-file "debian/libtux3-1.symbols differs from the exports: $(
			diff "$work/listed" "$work/versioned" | grep '^[<>]' |
			head -4 | tr '\n' ' ')(> to add, < to remove)"
	fi
fi

# Function names in the public headers: NAME( at a declaration
sed -n 's/^[a-z].*[ *]\(tux3_[a-z0-9_]*\)(.*/\1/p' \
	"$top"/common/tux3.h "$top"/common/tux3_walk.h \
	"$top"/common/tux3_fsck.h "$top"/common/tux3_fields.h |
	sort -u > "$work/declared"
missing=$(comm -23 "$work/declared" "$work/exports" | head -5 | tr '\n' ' ')
if [ "$(wc -l < "$work/declared")" -lt 50 ]; then
	fail api "only $(wc -l < "$work/declared") declarations found"
elif [ -n "$missing" ]; then
	fail api "declared but not exported: $missing"
else
	pass api
fi

tools="mkfs.tux3 fsck.tux3 tux3debug tux3dot tux3image tux3fuse tux3tune tux3probe"
unlinked=""
for t in $tools; do
	[ -x "$build/$t" ] || continue
	readelf -d "$build/$t" | grep -q 'NEEDED.*\[libtux3.so.1\]' ||
		unlinked="$unlinked $t"
done
if [ -n "$unlinked" ]; then
	skip tools-link "linked statically (STATIC=1):$unlinked"
	skip mismatch "the tools do not load libtux3.so.1"
	exit 0
fi
pass tools-link

# A library claiming interface 1000, put in front of libtux3.so.1
printf 'int tux3_library_version(void);\n%s\n' \
	'int tux3_library_version(void) { return 1000; }' > "$work/shim.c"
if ! cc -shared -fPIC -o "$work/shim.so" "$work/shim.c" 2> "$work/cc.out"; then
	fail mismatch "cc: $(head -2 "$work/cc.out")"
	exit 0
fi
img=$work/v.img
if ! "$build/mkfs.tux3" -q "$img" 16m > "$work/mkfs.out" 2>&1; then
	fail mismatch "mkfs.tux3: $(head -2 "$work/mkfs.out")"
	exit 0
fi
# A sanitizer build's runtime must come first; the shim does not need it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# mismatch TOOL STATUS ARGS...: STATUS and the message with the shim;
# with the real library the same command does not refuse
mismatch() {
	t=$1 want=$2
	shift 2
	LD_PRELOAD=$work/shim.so "$build/$t" "$@" > "$work/$t.out" 2>&1
	rc=$?
	"$build/$t" "$@" > "$work/$t.ok" 2>&1
	if [ $rc -ne "$want" ]; then
		fail "$t-mismatch" "exit $rc, want $want: $(head -2 "$work/$t.out")"
	elif ! grep -q 'interface' "$work/$t.out"; then
		fail "$t-mismatch" "no message: $(head -2 "$work/$t.out")"
	elif grep -q 'interface' "$work/$t.ok"; then
		fail "$t-mismatch" "refused with the real library too"
	else
		pass "$t-mismatch"
	fi
}
mismatch mkfs.tux3 1 -n -q "$img" 16m
mismatch fsck.tux3 128 -fn "$img"
mismatch tux3debug 1 -R super "$img"
mismatch tux3dot 8 -o "$work/v.dot" "$img"
mismatch tux3image 8 "$img" "$work/v.t3i"
mismatch tux3fuse 1 -V
mismatch tux3tune 1 -l "$img"
mismatch tux3probe 4 "$img"

# every installed program that links libtux3 is checked above
checked=$(sed -n 's/^mismatch \([a-z0-9.]*\) .*/\1/p' "$0" | sort -u | tr '\n' ' ')
linked=
for t in "$build"/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	readelf -d "$t" 2>/dev/null | grep -q 'NEEDED.*\[libtux3.so.1\]' &&
		linked="$linked ${t##*/}"
done
unchecked=
for t in $linked; do
	case " $checked" in *" $t "*) ;; *) unchecked="$unchecked $t" ;; esac
done
[ -z "$unchecked" ] && pass mismatch-every-tool ||
	fail mismatch-every-tool "link libtux3.so.1 without a mismatch check here:$unchecked"
