build2/tests/fuse_posix: tests/fuse_posix.c
