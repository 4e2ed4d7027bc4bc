# Without -w every editing command is refused and nothing is written
write host.txt /new
mkdir /d
rm /hello.txt
rmdir /docs/notes
ln /hello.txt /h2
ln -s hello.txt /s2
mv /hello.txt /h3
cp /hello.txt /h4
setxattr /hello.txt user.x y
rmxattr /hello.txt user.colour
truncate /big.txt 0
chmod 600 /hello.txt
chown 1:1 /hello.txt
touch /new
mknod /p p
set_label x
set_uuid clear
delta
unify
set_super volblocks 1
set_inode 74 nlink 2
set_block 100 0 00
ls
