# options: -w
# ls -d: a deleted entry left in a record's slack (made by hand with
# set_block) is shown in angle brackets; live entries as ever
ls -d /docs
set_block 423 0x48 0000000000000050001003016f6c6400
ls -d /docs
ls -l -d /docs
ls -p -d /docs
ls -d --json /docs
ls /docs
check
