# Reverse lookups and the bitmap: icheck, ncheck, testb, ffb, freefrag,
# frag, orphans, find_magic; bad block and inode numbers
icheck 0 7 8 64 65 428 432 436 442 437 8191
icheck 74
icheck 8192
icheck abc
icheck -5
icheck
ncheck 68 63 79 78 999
ncheck <70>
ncheck 0
ncheck x
ncheck
testb 64
testb 60 10
testb 8191
testb 8192
testb 60 0
testb 60 9000
testb
ffb
ffb 3
ffb 5 8190
ffb 0
ffb 1 9999
freefrag
freefrag -x
frag
frag -v
frag -a
frag /sparse.img
filefrag /big.txt
frag /nope
orphans
orphans now
find_magic bnode
find_magic ileaf
find_magic dleaf
find_magic log
find_magic 0x90de
find_magic -a ileaf
find_magic -a 0x1234
find_magic oleaf
find_magic nonsense
find_magic 0x10000
find_magic
