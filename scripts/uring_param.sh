# FUSE over io_uring for the benchmarks (sourced by bench.sh and
# bench_fuse.sh): the fuse module's enable_uring parameter, turned on for
# a run and put back as it was.
#   uring_on       succeeds when the kernel has the parameter and it is
#                  now on (what it was is kept in uring_was)
#   uring_restore  puts back what uring_on found
uring_param=/sys/module/fuse/parameters/enable_uring
uring_was=

uring_on() {
	[ -w "$uring_param" ] || return 1
	[ -n "$uring_was" ] || uring_was=$(cat "$uring_param")
	echo Y > "$uring_param"
}

uring_restore() {
	[ -n "$uring_was" ] && echo "$uring_was" > "$uring_param"
	uring_was=
	return 0
}
