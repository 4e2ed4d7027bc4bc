build2/debugfs/tree.o: debugfs/tree.c debugfs/debugfs.h common/tux3.h \
 common/tux3_walk.h common/tux3.h common/tux3_fields.h
debugfs/debugfs.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
common/tux3_fields.h:
