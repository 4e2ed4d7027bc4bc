# Navigation and files on the fixture, read-only; errors for bad paths.
ls
ls -l
ls -p /
list /docs
dir <67>
ls -l /docs/notes
ls /hello.txt
ls /nope
ls -z
ls / /docs
cd /docs
pwd
ls
cd notes
pwd
ls -l
cd ..
pwd
cd ../..
pwd
cd /hello.txt
cd /nope
cd @snapshot
cd /docs/notes/../..
pwd
chdir bin
pwd
cd
pwd
pwd extra
stat /hello.txt
stat <63>
stat /null
stat /disk
stat /link
stat /sparse.img
stat /fifo
stat /nope
stat <0>
stat <abc>
stat <99999>
stat
cat /hello.txt
cat /link
cat /docs/readme.md
cat "/name with space"
cat /name\ with\ space
cat /empty
cat /docs
cat /null
readlink /link
readlink /hello.txt
readlink /nope
xattrs /bin/tool
ea_list /hello.txt
xattrs /docs
xattrs /nope
find
find /docs
find / -name *.txt
find / -type d
find / -type l
find / -inum 68
find /docs -name hard* -type f
find / -type x
find / -inum 0
find / -bogus
find /nope
manifest /docs
manifest /nope
