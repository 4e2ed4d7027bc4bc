build2/debugfs/raw.o: debugfs/raw.c debugfs/debugfs.h common/tux3.h \
 common/tux3_walk.h common/tux3.h common/tux3_fields.h
debugfs/debugfs.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
common/tux3_fields.h:
