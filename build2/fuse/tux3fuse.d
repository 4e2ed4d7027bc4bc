build2/fuse/tux3fuse.o: fuse/tux3fuse.c fuse/tux3fuse.h \
 /usr/include/fuse3/fuse_lowlevel.h /usr/include/fuse3/fuse_common.h \
 /usr/include/fuse3/libfuse_config.h /usr/include/fuse3/fuse_opt.h \
 /usr/include/fuse3/fuse_log.h common/tux3.h
fuse/tux3fuse.h:
/usr/include/fuse3/fuse_lowlevel.h:
/usr/include/fuse3/fuse_common.h:
/usr/include/fuse3/libfuse_config.h:
/usr/include/fuse3/fuse_opt.h:
/usr/include/fuse3/fuse_log.h:
common/tux3.h:
