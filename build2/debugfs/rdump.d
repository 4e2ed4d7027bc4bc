build2/debugfs/rdump.o: debugfs/rdump.c debugfs/debugfs.h common/tux3.h \
 common/tux3_walk.h common/tux3.h
debugfs/debugfs.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
