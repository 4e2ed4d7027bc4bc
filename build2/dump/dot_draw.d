build2/dump/dot_draw.o: dump/dot_draw.c dump/dot.h common/tux3.h
dump/dot.h:
common/tux3.h:
