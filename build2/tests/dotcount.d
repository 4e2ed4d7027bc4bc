build2/tests/dotcount: tests/dotcount.c common/tux3.h common/tux3_walk.h \
 common/tux3.h
common/tux3.h:
common/tux3_walk.h:
common/tux3.h:
