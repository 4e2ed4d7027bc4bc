build2/tests/fuse_roundtrip: tests/fuse_roundtrip.c
