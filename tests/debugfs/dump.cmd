# needs: root
# Copying out to the host: dump, dump -p, rdump (files without xattrs,
# which a host filesystem may refuse: rdump's xattrs are tested by
# mkfs_populate.sh)
dump /hello.txt out.txt
dump -p /docs/readme.md readme.out
dump_inode /sparse.img sparse.out
dump /docs docs.out
dump /nope x
dump /hello.txt
dump /hello.txt /nonexistent-dir/out
rdump /docs restore
rdump /link restore
rdump /null devices
rdump /disk devices
rdump /fifo devices
rdump <70> restore
rdump /docs restore
rdump /nope x
