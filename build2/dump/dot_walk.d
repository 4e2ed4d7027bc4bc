build2/dump/dot_walk.o: dump/dot_walk.c dump/dot.h common/tux3.h \
 common/tux3_walk.h common/tux3.h
dump/dot.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
