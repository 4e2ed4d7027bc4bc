# options: -w
# After a unify the log starts afresh: the records of the unifying delta
# before its UNIFY are not replayed.  Without replay (-c) the inode
# table's root is one the unify's own changes moved after its mark, so
# only the log has it: -c shows that and fails naming the block
mkdir /after
unify
touch /after/file
unify
close
open vol.img
log
replay -s 0
replay -s 1
close
open -c vol.img
itree -v
ls -l /after
statfs
replay
close
open -w vol.img
unify
replay
