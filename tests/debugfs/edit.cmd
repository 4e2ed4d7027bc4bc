# options: -w
# The editing commands, each with an error case; batched until delta
mkdir /new
mkdir /new/sub
mkdir /new
mkdir /nope/x
mkdir /
write host.txt /new/host.txt
write host.bin /new/host.bin
write host.txt /new/host.txt
write host.bin /new/replace
write -f host.txt /new/replace
write missing.txt /new/m
write host.txt
ln /new/host.bin /new/hardlink
ln -s ../hello.txt /new/symlink
ln /docs /new/dirlink
ln /nope /new/x
cp /hello.txt /new/copy
cp -p /hello.txt /new/copy-p
cp /sparse.img /new
cp /link /new/link
cp /null /new/null
cp /docs /new/docs
cp /nope /new/x
cp /hello.txt /new/copy
mv /new/copy /new/moved
mv -n /new/moved /new/copy-p
mv -x /new/moved /new/copy-p
mv /new /new/sub/inside
mv /nope /x
setxattr /new/moved user.a one
setxattr /new/moved user.b 0x0102ff
setxattr /new/moved user.c 0x0
rmxattr /new/moved user.a
rmxattr /new/moved user.zz
truncate /new/host.bin 100
truncate /new/sparse.img 200000
truncate /new -1
truncate /new 10
chmod 600 /new/moved
chmod 9999 /new/moved
chown 12:34 /new/moved
chown 56: /new/copy-p
chown :78 /new/copy-p
chown x:y /new/moved
touch /new/touched
touch /hello.txt
touch <74>
mknod /new/fifo p
mknod /new/sock s
mknod /new/char c 4 5
mknod /new/block b 7 8
mknod /new/bad c 4096 0
mknod /new/bad q
rm /new/sub
rmdir /new/host.txt
rmdir /new
rm /new/null
rmdir /new/sub
delta
delta extra
ls -l /new
stat /new/moved
stat /new/copy-p
xattrs /new/moved
cat /new/replace
cat /new/copy-p
readlink /new/symlink
readlink /new/link
extents /new/sparse.img
extents /new/host.bin
unify
atoms
check
