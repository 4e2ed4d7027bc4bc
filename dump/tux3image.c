/*
 * tux3image: save a Tux3 volume's metadata to a file, and write such a
 * file back (see doc/tux3image.8).
 *
 *   tux3image [-r] [-s] [-a] [-v] DEVICE IMAGEFILE
 *   tux3image -R [-v] IMAGEFILE DEVICE
 *
 * Exit: 0 done; 1 image written, but the volume had structures that
 * could not be read (each one warned); 8 operational error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "image.h"

const char *image_prog = "tux3image";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-r] [-s] [-a] [-v] DEVICE IMAGEFILE\n"
		"       %s -R [-v] IMAGEFILE DEVICE\n"
		"  -r  raw image: a sparse file of the volume's size\n"
		"      (default: the compact image format)\n"
		"  -s  scramble directory entry names and symlink targets\n"
		"  -a  include the data of regular files\n"
		"  -R  restore: write a compact image back to DEVICE\n"
		"  -v  print a summary\n"
		"  -h  this help; -V the version\n",
		image_prog, image_prog);
}

int main(int argc, char **argv)
{
	struct image im = { .fd = -1 };
	int restore = 0, c;

	opterr = 0;
	while ((c = getopt(argc, argv, "rsaRvhV")) != -1) {
		switch (c) {
		case 'r': im.raw = 1; break;
		case 's': im.scramble = 1; break;
		case 'a': im.all_data = 1; break;
		case 'R': restore = 1; break;
		case 'v': im.verbose = 1; break;
		case 'h':
			usage(stdout);
			return IMAGE_EXIT_OK;
		case 'V':
			printf("%s (libtux3 %s)\n", image_prog, tux3_version());
			return IMAGE_EXIT_OK;
		default:
			fprintf(stderr, "%s: unknown option -%c\n", image_prog,
				optopt);
			usage(stderr);
			return IMAGE_EXIT_ERROR;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "%s: expected two arguments, got %d\n",
			image_prog, argc - optind);
		usage(stderr);
		return IMAGE_EXIT_ERROR;
	}
	if (restore) {
		if (im.raw || im.scramble || im.all_data) {
			fprintf(stderr, "%s: -R takes no -r, -s or -a (the "
				"image says how it was made)\n", image_prog);
			usage(stderr);
			return IMAGE_EXIT_ERROR;
		}
		return image_restore(argv[optind], argv[optind + 1],
				     im.verbose) ? IMAGE_EXIT_ERROR :
			IMAGE_EXIT_OK;
	}
	if (tux3_library_version() != TUX3_LIBRARY_VERSION) {
		fprintf(stderr, "%s: built for libtux3 interface %d, running "
			"with %d\n", image_prog, TUX3_LIBRARY_VERSION,
			tux3_library_version());
		return IMAGE_EXIT_ERROR;
	}
	im.device = argv[optind];
	im.output = argv[optind + 1];
	int e = image_collect(&im);
	if (!e && (e = image_prepare_scramble(&im))) {
		if (e == -ENOSPC)
			image_err("no scramble left for a name (too many "
				  "names of one length)");
		else
			image_err("cannot scramble: %s", strerror(-e));
	}
	if (!e)
		e = image_write(&im);
	if (!e && im.verbose) {
		printf("%s: %s: %" PRIu64 " of %" PRIu64 " blocks of %u bytes "
		       "(%" PRIu64 " zero) in %" PRIu64 " runs",
		       image_prog, im.output, im.out_blocks, im.volblocks,
		       im.blocksize, im.out_zero_blocks, im.out_runs);
		if (im.raw)
			printf(", raw image of %" PRIu64 " bytes", im.out_bytes);
		else
			printf(", %" PRIu64 " bytes", im.out_bytes);
		if (im.scramble)
			printf(", %" PRIu64 " names scrambled",
			       scrambler_names(im.scr));
		printf("\n");
	}
	unsigned problems = im.problems;
	image_release(&im);
	if (e)
		return IMAGE_EXIT_ERROR;
	if (problems) {
		fprintf(stderr, "%s: %s: %u problem%s met: the image is "
			"written, but it may be incomplete\n", image_prog,
			im.device, problems, problems == 1 ? "" : "s");
		return IMAGE_EXIT_DAMAGED;
	}
	return IMAGE_EXIT_OK;
}
