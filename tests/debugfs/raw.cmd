# Raw views: block and inode decoded by the field tables; the raw
# editors need -w
block 432
block 442
block 436
block 0
block 4
block 8192
block x
block
bd -f 64
inode 74
inode /hello.txt
id <78>
inode 9999
inode 0
set_super volblocks 1
set_inode 74 mode 0100600
set_block 100 0 00
