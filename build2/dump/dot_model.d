build2/dump/dot_model.o: dump/dot_model.c dump/dot.h common/tux3.h
dump/dot.h:
common/tux3.h:
