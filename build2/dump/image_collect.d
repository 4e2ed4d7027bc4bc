build2/dump/image_collect.o: dump/image_collect.c dump/image.h \
 common/tux3.h common/tux3_walk.h common/tux3.h
dump/image.h:
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
