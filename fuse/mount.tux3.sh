#!/bin/sh
# mount.tux3 DEVICE DIR [-sfnv] [-o options]
#
# The mount(8) helper for type tux3: `mount -t tux3 DEVICE DIR` and fstab
# lines of type tux3 run this, which runs tux3fuse (fsname = DEVICE,
# subtype tux3; the mount then shows as type fuse.tux3).  Options only
# mount(8) and the boot scripts use (defaults, noauto, user, nofail,
# _netdev, x-*, comment=...) are dropped; the rest go to tux3fuse.
# -f (fake) does nothing, -n and -s are accepted and ignored, -v shows
# the command.  TUX3FUSE names the tux3fuse to run; by default the one
# beside this script, then the installed one, then the one on PATH.
set -u

usage() {
	echo "usage: mount.tux3 DEVICE DIR [-sfnv] [-o options]" >&2
	exit 1
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

keep=""
old_ifs=$IFS
IFS=,
for o in $opts; do
	case $o in
	""|defaults|auto|noauto|user|nouser|users|owner|group|nofail|\
	_netdev|comment=*|x-*|loop|loop=*) ;;
	*) keep="${keep:+$keep,}$o" ;;
	esac
done
IFS=$old_ifs

tux3fuse=${TUX3FUSE:-}
if [ -z "$tux3fuse" ]; then
	for c in "$(dirname "$0")/tux3fuse" "@SBINDIR@/tux3fuse"; do
		if [ -x "$c" ]; then
			tux3fuse=$c
			break
		fi
	done
fi
if [ -z "$tux3fuse" ]; then
	tux3fuse=$(command -v tux3fuse) || {
		echo "mount.tux3: cannot find tux3fuse" >&2
		exit 1
	}
fi

[ $verbose = 1 ] && echo "mount.tux3: $tux3fuse ${keep:+-o $keep }$dev $dir" >&2
[ $fake = 1 ] && exit 0
if [ -n "$keep" ]; then
	exec "$tux3fuse" -o "$keep" "$dev" "$dir"
fi
exec "$tux3fuse" "$dev" "$dir"
