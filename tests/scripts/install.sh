#!/bin/sh
# make install and uninstall, as a packager uses them:
#   install/files        `make install DESTDIR=D` puts exactly the files of
#                        tests/install.list below D
#   install/no-runpath   the installed programs carry no run path
#   install/exports      the installed libtux3.so.1 (soname libtux3.so.1)
#                        exports only tux3_* symbols
#   install/pkg-config   pkg-config --cflags --libs tux3 works on D's tux3.pc
#   install/external     tests/external/tux3cat.c, copied out of the tree and
#                        built with only what pkg-config gives, links
#                        libtux3.so.1 and reads a volume the installed
#                        mkfs.tux3 -d made
#   install/uninstall    `make uninstall DESTDIR=D` leaves no file in D
# On the normal build only: a sanitizer build's library needs its runtime,
# and a coverage build's tree would be rebuilt by make install.
set -u
T=install
. "$(dirname "$0")/lib/report.sh"
build=${1:-build}
top=$(cd "$(dirname "$0")/../.." && pwd)

require_tools make cc pkg-config nm readelf
if [ ! -f "$build/libtux3.so.1" ]; then
	skip all "no $build/libtux3.so.1"
	exit 0
fi
if readelf -d "$build/libtux3.so.1" | grep -q 'libasan'; then
	skip all "a sanitizer build (the install is of the normal build)"
	exit 0
fi
# make install BUILD=build-cov would rebuild the whole tree without the
# coverage flags (the normal flavour's rules), under the jobs running on it
if grep -q -- '--coverage' "$build/.cflags" 2>/dev/null; then
	skip all "a coverage build (the install is of the normal build)"
	exit 0
fi
# BUILD as make names it: relative to the top when inside it
case $build in
/*) b=$build ;;
*)  b=$(pwd)/$build ;;
esac
b=$(cd "$b" && pwd)
case $b in
"$top"/*) b=${b#"$top"/} ;;
esac

scratch_dir
dest=$work/dest
lib=$dest/usr/local/lib

if ! (cd "$top" && make -s install BUILD="$b" DESTDIR="$dest") \
		> "$work/install.out" 2>&1; then
	fail files "make install failed: $(tail -3 "$work/install.out")"
	exit 0
fi
(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort) \
	> "$work/have"
grep -v '^#' "$top/tests/install.list" > "$work/want"
if cmp -s "$work/have" "$work/want"; then
	pass files
else
	fail files "differs from tests/install.list: $(diff "$work/want" \
		"$work/have" | grep '^[<>]' | head -4 | tr '\n' ' ')"
fi

rpaths=""
for p in "$dest"/usr/local/sbin/*; do
	[ -L "$p" ] || ! head -c 4 "$p" | grep -q ELF && continue
	readelf -d "$p" | grep -q 'RPATH\|RUNPATH' && rpaths="$rpaths ${p##*/}"
done
[ -z "$rpaths" ] && pass no-runpath || fail no-runpath "run path in:$rpaths"

soname=$(readelf -d "$lib/libtux3.so.1" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
others=$(nm -D --defined-only "$lib/libtux3.so.1" | awk '{print $3}' |
	grep -v '^tux3_' | grep -v '^TUX3_[0-9.]*$' | head -5 | tr '\n' ' ')
count=$(nm -D --defined-only "$lib/libtux3.so.1" | grep -c ' tux3_')
if [ "$soname" = libtux3.so.1 ] && [ -z "$others" ] && [ "$count" -gt 50 ]; then
	pass exports
else
	fail exports "soname '$soname', $count tux3_* symbols, others: $others"
fi

pc() {
	PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest \
		PKG_CONFIG_LIBDIR=$lib/pkgconfig pkg-config "$@"
}
flags=$(pc --cflags --libs tux3 2>&1)
version=$(pc --modversion tux3 2>&1)
case $flags in
*"-I$dest/usr/local/include/tux3"*"-L$lib"*"-ltux3"*) pass pkg-config ;;
*) fail pkg-config "pkg-config --cflags --libs tux3: $flags" ;;
esac

# The external program: out of the tree, only the installed headers
mkdir -p "$work/ext" "$work/root"
cp "$top/tests/external/tux3cat.c" "$work/ext/"
printf 'hello from an installed libtux3\n' > "$work/root/hello.txt"
img=$work/v.img
# shellcheck disable=SC2086
if ! (cd "$work/ext" && cc -std=gnu11 -Wall -Wextra -Werror -o tux3cat \
		tux3cat.c $flags) > "$work/cc.out" 2>&1; then
	fail external "cc: $(head -3 "$work/cc.out")"
elif ! readelf -d "$work/ext/tux3cat" | grep -q 'NEEDED.*\[libtux3.so.1\]'; then
	fail external "tux3cat does not link libtux3.so.1"
elif ! LD_LIBRARY_PATH=$lib "$dest/usr/local/sbin/mkfs.tux3" -q \
		-d "$work/root" "$img" 16m > "$work/mkfs.out" 2>&1; then
	fail external "installed mkfs.tux3: $(head -2 "$work/mkfs.out")"
elif ! LD_LIBRARY_PATH=$lib "$work/ext/tux3cat" "$img" /hello.txt \
		> "$work/cat.out" 2> "$work/cat.err"; then
	fail external "tux3cat: $(head -2 "$work/cat.err")"
elif ! grep -q "^libtux3 $version interface 1$" "$work/cat.out" ||
     ! grep -q '^entry hello.txt type 1$' "$work/cat.out" ||
     ! grep -q '^hello from an installed libtux3$' "$work/cat.out"; then
	fail external "tux3cat printed: $(head -4 "$work/cat.out" | tr '\n' '|')"
else
	pass external
fi

if ! (cd "$top" && make -s uninstall BUILD="$b" DESTDIR="$dest") \
		> "$work/uninstall.out" 2>&1; then
	fail uninstall "make uninstall failed: $(tail -3 "$work/uninstall.out")"
else
	left=$(cd "$dest" && find . \( -type f -o -type l \) | head -5 |
		tr '\n' ' ')
	[ -z "$left" ] && pass uninstall || fail uninstall "left: $left"
fi
