# options: -w
# The raw editors: set_inode through the write path, set_super and
# set_block straight to the device (the volume is reopened after them)
set_inode 74 mode 0100600
set_inode 74 mtime 1
set_inode 74 colour 1
set_inode 9999 mode 0
stat /hello.txt
set_super -c ext.label raw
super
set_super nosuchfield 1
set_super blockbits 99999
set_block 8000 0 cafe
block 8000
set_block 8000 1023 cafe
set_block 8192 0 00
set_block 8000 0 xyz
set_super volblocks 999999
ls
