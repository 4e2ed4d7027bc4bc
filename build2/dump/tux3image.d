build2/dump/tux3image.o: dump/tux3image.c dump/image.h common/tux3.h
dump/image.h:
common/tux3.h:
