# Time bounds that hold on a slow build and a loaded machine (sourced by
# the scripted tests; $build is the build tree under test).
#   time_limit SECONDS   SECONDS scaled for the build: x5 for a sanitizer
#                        build (build-asan), x3 for a coverage build
#                        (build-cov), and x TEST_TIME_SCALE (an integer,
#                        default 1) on top, for a machine known to be slow
#   wait_for SECONDS CMD...
#                        CMD every 0.1 s until it succeeds or
#                        time_limit SECONDS have passed (status 1): a check
#                        polls instead of sampling once after a sleep
time_limit() {
	case $(basename "${build:-build}") in
	*asan*) _scale=5 ;;
	*cov*) _scale=3 ;;
	*) _scale=1 ;;
	esac
	echo $(( $1 * _scale * ${TEST_TIME_SCALE:-1} ))
}

wait_for() {
	_until=$(( $(date +%s) + $(time_limit "$1") ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$_until" ] || return 1
		sleep 0.1
	done
}
