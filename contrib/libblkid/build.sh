#!/bin/sh
# Build util-linux's blkid with the Tux3 prober (tux3.c + register.patch).
#
#   sh contrib/libblkid/build.sh OUTDIR [UTIL_LINUX_SOURCE_DIR]
#
# Without a source directory, Debian's source package of the installed
# util-linux is fetched with apt-get source, through private apt lists
# under OUTDIR (the system's apt configuration is not changed).  The
# build needs autoconf, automake, libtool, autopoint and gettext.  The
# result is OUTDIR/util-linux/blkid (run it with
# LD_LIBRARY_PATH=OUTDIR/util-linux/.libs) and its libblkid.so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: build.sh OUTDIR [SOURCE]}
src=${2:-}
mkdir -p "$out"
out=$(cd "$out" && pwd)

fetch_source() {
	version=$(dpkg-query -W -f '${source:Version}' util-linux)
	codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
	mkdir -p "$out/apt/lists/partial" "$out/fetch"
	{
		echo "deb-src http://deb.debian.org/debian $codename main"
		echo "deb-src http://deb.debian.org/debian $codename-updates main"
		echo "deb-src http://deb.debian.org/debian-security $codename-security main"
	} > "$out/apt/sources.list"
	set -- -o Dir::Etc::SourceList="$out/apt/sources.list" \
	       -o Dir::Etc::SourceParts=/dev/null \
	       -o Dir::State::Lists="$out/apt/lists"
	apt-get "$@" -qq update
	(cd "$out/fetch" && apt-get "$@" -qq source --only-source \
		"util-linux=$version" >/dev/null 2>&1)
	src=$(ls -d "$out"/fetch/util-linux-*/ | head -n 1)
}

# The tools to regenerate util-linux's build system, installed as the
# project's deps step installs packages: only when missing, only as root.
need=
for tool in autoreconf:autoconf automake:automake libtoolize:libtool \
	    autopoint:autopoint msgfmt:gettext; do
	command -v "${tool%%:*}" > /dev/null 2>&1 || need="$need ${tool#*:}"
done
if [ -n "$need" ]; then
	[ "$(id -u)" = 0 ] ||
		{ echo "build.sh: install$need first" >&2; exit 2; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need > /dev/null
fi
[ -n "$src" ] || fetch_source
[ -f "$src/libblkid/src/superblocks/superblocks.c" ] ||
	{ echo "build.sh: $src is not a util-linux source tree" >&2; exit 2; }

rm -rf "$out/util-linux"
cp -a "$src" "$out/util-linux"
cd "$out/util-linux"
cp "$here/tux3.c" libblkid/src/superblocks/tux3.c
patch -s -p1 < "$here/register.patch"
# Makemodule.am changed: regenerate the build system (autoconf, automake,
# libtool, autopoint, gettext, pkg-config; the tarball ships gtk-doc.make,
# so gtkdocize is not needed).
GTKDOCIZE=true autoreconf -fi >/dev/null 2>&1
./configure -q --disable-all-programs --enable-libblkid --enable-blkid \
	--disable-nls --without-python --without-systemd \
	--without-udev --disable-bash-completion >/dev/null
make -s -j"$(nproc)" blkid >/dev/null
echo "built $out/util-linux/blkid"
