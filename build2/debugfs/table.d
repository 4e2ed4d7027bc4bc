build2/debugfs/table.o: debugfs/table.c debugfs/debugfs.h common/tux3.h \
 common/tux3_walk.h common/tux3.h
debugfs/debugfs.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
