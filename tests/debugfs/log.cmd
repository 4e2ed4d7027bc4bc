# The log and what its replay changed, stage by stage
log
logdump extra
replay
replay -s 0
replay -s 1
replay -s 2 -q
replay -q
replay -s 3
replay -x
replay extra
