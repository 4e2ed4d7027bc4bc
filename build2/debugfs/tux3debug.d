build2/debugfs/tux3debug.o: debugfs/tux3debug.c debugfs/debugfs.h \
 common/tux3.h common/tux3_walk.h common/tux3.h
debugfs/debugfs.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
