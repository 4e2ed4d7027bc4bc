# options: -c
# -c: opened without replaying the log (the on-disk trees and bitmap)
super
statfs
log
replay
ls -l /
itree
