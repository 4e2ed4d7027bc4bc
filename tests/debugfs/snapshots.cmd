# options: -w
# Snapshots: make one, change the live version, enter the snapshot (cd
# @TAG) and see the old content, change the snapshot, go back to the
# live version (cd @) and see its own; paths @TAG/PATH from anywhere; a
# snapshot of a snapshot; cp between versions; errors; delete.
versions
snapshot create monday
snapshot list
# the live version changes; monday keeps what was
write -f host.txt /hello.txt
setxattr /hello.txt user.colour red
mkdir /new
rm /docs/notes/a.txt
cat /hello.txt
xattrs /hello.txt
ls /
cd @monday
pwd
cat /hello.txt
xattrs /hello.txt
ls
ls docs/notes
cat docs/notes/a.txt
cd docs
pwd
cat readme.md
# edits inside the snapshot change only it
write host.txt only-monday.txt
truncate readme.md 9
setxattr readme.md user.day monday
mv notes/a.txt notes/b.txt
ls
cat readme.md
cd /
pwd
ls
stat docs/only-monday.txt
extents docs/readme.md
# back to the live version: its own content
cd @
pwd
cat /docs/readme.md
ls /docs
ls /docs/notes
xattrs /docs/readme.md
# paths in a version from anywhere
cat @monday/docs/readme.md
xattrs @monday/docs/readme.md
ls @monday/docs/notes
cd @monday/docs/notes
pwd
cd ..
pwd
cd ../..
pwd
cd @/docs
pwd
cd /
# a snapshot of a snapshot; cp restores a file from a snapshot
snapshot create tuesday --of monday
cp @monday/docs/notes/b.txt /docs/notes/a.txt
cat /docs/notes/a.txt
cp -p @monday/docs/readme.md @tuesday/docs/copy.md
manifest @tuesday/docs
manifest /docs
versions
# errors
snapshot create monday
snapshot create wednesday --of nope
snapshot create a/b
snapshot create 0123456789012345678901234567890123456789
snapshot list -s
snapshot list -x
snapshot create
snapshot delete nope
snapshot delete
snapshot frobnicate
cd @nope
cd @nope/docs
ls @nope/
cd @monday/hello.txt
mkdir @monday
mv @monday/hello.txt /hello2.txt
ln @monday/hello.txt @tuesday/x
# a directory named @x is ./@x
mkdir ./@x
ls
ls ./@x
rmdir ./@x
# a snapshot named live is @live; @ alone is the live version
snapshot create live
cd @live/docs
pwd
cd @
pwd
snapshot delete live
# deleting the snapshot the shell is in: back to the live version
cd @tuesday/docs
snapshot delete tuesday
pwd
snapshot delete monday
versions
snapshot list
cat /hello.txt
check
