/*
 * tux3cat VOLUME PATH: print the interface version, list the root
 * directory of VOLUME and print the file at PATH.  Built outside the tree
 * against an installed libtux3 (tests/scripts/install.sh), through
 * pkg-config, with only the installed headers: what any program using
 * the library does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <tux3.h>

static int show(void *ctx, const char *name, unsigned len, tux3_ino_t ino,
		unsigned type, uint64_t pos)
{
	(void)ctx; (void)ino; (void)pos;
	printf("entry %.*s type %u\n", (int)len, name, type);
	return 0;
}

int main(int argc, char **argv)
{
	struct tux3_volume *vol;
	tux3_ino_t ino;
	char text[512];
	char buf[4096];
	ssize_t got;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: tux3cat VOLUME PATH\n");
		return 2;
	}
	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, "tux3cat: libtux3 interface %d, built for %d\n",
			tux3_library_version(), TUX3_LIBRARY_VERSION);
		return 1;
	}
	printf("libtux3 %s interface %d\n", tux3_version(),
	       tux3_library_version());
	err = tux3_open_err(argv[1], TUX3_OPEN_RDONLY, &vol, text,
			    sizeof(text));
	if (err < 0) {
		fprintf(stderr, "tux3cat: %s: %s\n", argv[1], text);
		return 1;
	}
	err = tux3_readdir(vol, TUX3_ROOT_INO, show, NULL);
	if (!err)
		err = tux3_lookup_path(vol, argv[2], &ino);
	for (uint64_t pos = 0; !err; pos += (uint64_t)got) {
		got = tux3_read(vol, ino, buf, sizeof(buf), pos);
		if (got <= 0) {
			err = (int)got;
			break;
		}
		fwrite(buf, 1, (size_t)got, stdout);
	}
	if (err < 0)
		fprintf(stderr, "tux3cat: %s\n",
			tux3_error_text(vol, text, sizeof(text)));
	tux3_close(vol);
	return err < 0;
}
