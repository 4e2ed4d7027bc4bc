build2/dump/tux3dot.o: dump/tux3dot.c dump/dot.h common/tux3.h
dump/dot.h:
common/tux3.h:
