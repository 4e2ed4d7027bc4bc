# Structures: superblock, free space, atoms, tree shapes, extents and
# block maps, a file's blocks, and the check
super
stats
statfs
df
atoms
itree
itree -v
itree -x
otree
otree -v
dtree /sparse.img
dtree -v /sparse.img
dtree /big.txt
dtree /empty
dtree /nope
dtree
extents /sparse.img
ex /big.txt
extents /empty
extents /nope
bmap /sparse.img 0
bmap /sparse.img 5
bmap /sparse.img 39
bmap /sparse.img 1000
bmap /big.txt 351
bmap /sparse.img x
bmap /sparse.img -1
bmap /nope 0
blocks /sparse.img
blocks -v /sparse.img
blocks /big.txt
blocks /
blocks /empty
blocks /nope
check
