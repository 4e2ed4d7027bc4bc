build2/debugfs/versions.o: debugfs/versions.c debugfs/debugfs.h \
 common/tux3.h common/tux3_walk.h common/tux3.h
debugfs/debugfs.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
