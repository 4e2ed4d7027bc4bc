# device: none
# Without a device: only the shell commands work; open and close switch
# volumes inside a session (-c: without replay)
help ls
ls
super
open
open -w -c vol.img
open -q vol.img
open missing.img
open vol.img
open vol.img
ls /docs
cd /docs
pwd
close
pwd
close
open -c vol.img
super
log
replay
ls /
close
open vol.img
statfs
quit
ls
