#!/bin/sh
# mount.tux3 DEVICE DIR [-sfnv] [-o options]
#
# The mount(8) helper for type tux3: `mount -t tux3 DEVICE DIR` and fstab
# lines of type tux3 run this, which runs tux3fuse (fsname = DEVICE,
# subtype tux3; the mount then shows as type fuse.tux3).  DEVICE may be
# UUID=... or LABEL=..., found with tux3probe (libblkid knows no Tux3).
# Options only mount(8) and the boot scripts use (defaults, noauto, user,
# nofail, _netdev, x-*, comment=...) are dropped; the rest go to tux3fuse.
# nofail: a device that does not exist (or a UUID=/LABEL= no device has)
# is not an error.  -f (fake) does nothing, -n and -s are accepted and
# ignored, -v shows the command.  TUX3FUSE and TUX3PROBE name the
# programs to run; by default the ones beside this script, then the
# installed ones, then the ones on PATH.
# Exit status as mount(8)'s: 0 mounted, 1 bad usage, 32 mount failure
# (one line on stderr says why, or tux3fuse's own line).
set -u

EXIT_USAGE=1 EXIT_FAIL=32

usage() {
	echo "usage: mount.tux3 DEVICE DIR [-sfnv] [-o options]" >&2
	exit $EXIT_USAGE
}

# tool NAME OVERRIDE: the program beside this script, the installed one,
# or the one on PATH
tool() {
	if [ -n "$2" ]; then echo "$2"; return 0; fi
	for c in "$(dirname "$0")/$1" "@SBINDIR@/$1"; do
		if [ -x "$c" ]; then echo "$c"; return 0; fi
	done
	command -v "$1"
}

# missing WHY: the device is not there: one line and 32, or 0 under nofail
missing() {
	[ $nofail = 1 ] && exit 0
	echo "mount.tux3: $1" >&2
	exit $EXIT_FAIL
}

fake=0 verbose=0 opts="" dev="" dir=""
while [ $# -gt 0 ]; do
	case $1 in
	-o) [ $# -ge 2 ] || usage; opts="${opts:+$opts,}$2"; shift 2 ;;
	-o*) opts="${opts:+$opts,}${1#-o}"; shift ;;
	-t|-N) [ $# -ge 2 ] || usage; shift 2 ;;	# type, namespace
	-h|--help) usage ;;
	-*)	flags=${1#-}
		while [ -n "$flags" ]; do
			rest=${flags#?}
			case ${flags%"$rest"} in
			f) fake=1 ;;
			v) verbose=1 ;;
			n|s|r|w) ;;
			*) echo "mount.tux3: unknown flag -${flags%"$rest"}" >&2
			   usage ;;
			esac
			flags=$rest
		done
		case $1 in
		*r*) opts="${opts:+$opts,}ro" ;;
		esac
		shift ;;
	*)	if [ -z "$dev" ]; then dev=$1
		elif [ -z "$dir" ]; then dir=$1
		else usage
		fi
		shift ;;
	esac
done
[ -n "$dev" ] && [ -n "$dir" ] || usage

keep="" nofail=0
old_ifs=$IFS
IFS=,
for o in $opts; do
	case $o in
	nofail) nofail=1 ;;
	""|defaults|auto|noauto|user|nouser|users|owner|group|\
	_netdev|comment=*|x-*|loop|loop=*) ;;
	*) keep="${keep:+$keep,}$o" ;;
	esac
done
IFS=$old_ifs

case $dev in
UUID=*|LABEL=*)
	probe=$(tool tux3probe "${TUX3PROBE:-}") ||
		{ echo "mount.tux3: cannot find tux3probe" >&2; exit $EXIT_FAIL; }
	found=$("$probe" -o device -t "$dev" 2>/dev/null | head -n 1)
	[ -n "$found" ] || missing "no Tux3 volume has $dev"
	dev=$found ;;
esac
[ -e "$dev" ] || missing "$dev: no such device or file"
[ -d "$dir" ] || { echo "mount.tux3: $dir: not a directory" >&2; exit $EXIT_FAIL; }

tux3fuse=$(tool tux3fuse "${TUX3FUSE:-}") ||
	{ echo "mount.tux3: cannot find tux3fuse" >&2; exit $EXIT_FAIL; }

[ $verbose = 1 ] && echo "mount.tux3: $tux3fuse ${keep:+-o $keep }$dev $dir" >&2
[ $fake = 1 ] && exit 0
# tux3fuse says why it failed in one line of its own
if [ -n "$keep" ]; then
	"$tux3fuse" -o "$keep" "$dev" "$dir" || exit $EXIT_FAIL
else
	"$tux3fuse" "$dev" "$dir" || exit $EXIT_FAIL
fi
