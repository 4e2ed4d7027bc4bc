/* Layer: device.c -- opening images and the volume lock. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "fixtures.h"

TEST(writer_excludes_writer)
{
	const char *path = scratch_copy("small-delta");
	struct tux3_volume *a, *b = (void *)1;
	char msg[512];
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &a), 0);
	CHECK_EQ(tux3_open_err(path, TUX3_OPEN_RDWR_NORECOVER, &b, msg,
			       sizeof(msg)), -EBUSY);
	CHECK(b == NULL);
	CHECK(strstr(msg, "in use"));
	CHECK(strstr(msg, path));
	tux3_close(a);
	/* released at close */
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &b), 0);
	tux3_close(b);
}

TEST(writer_excludes_reader)
{
	const char *path = scratch_copy("small-delta");
	struct tux3_volume *a, *b = (void *)1;
	char msg[512];
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &a), 0);
	CHECK_EQ(tux3_open_err(path, TUX3_OPEN_RDONLY, &b, msg, sizeof(msg)),
		 -EBUSY);
	CHECK(b == NULL);
	CHECK(strstr(msg, "exclusive"));
	CHECK_EQ(tux3_open(path, TUX3_OPEN_NOREPLAY, &b), -EBUSY);
	tux3_close(a);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &b), 0);
	tux3_close(b);
}

TEST(reader_excludes_writer_not_reader)
{
	const char *path = scratch_copy("empty-4k");
	struct tux3_volume *a, *b, *c = (void *)1;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &a), 0);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &b), 0);	/* shared */
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &c), -EBUSY);
	CHECK(c == NULL);
	tux3_close(a);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &c), -EBUSY);
	tux3_close(b);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &c), 0);
	tux3_close(c);
}

TEST(lock_across_processes)
{
	const char *path = scratch_copy("empty-4k");
	struct tux3_volume *a;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &a), 0);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct tux3_volume *b;
		int e1 = tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &b);
		int e2 = tux3_open(path, TUX3_OPEN_RDONLY, &b);
		_exit(e1 == -EBUSY && e2 == -EBUSY ? 0 : 1);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	tux3_close(a);
}

TEST(read_only_device_fd)
{
	const char *path = scratch_copy("empty-4k");
	struct tux3_volume *vol;
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDONLY, &vol), 0);
	CHECK(vol->dev.readonly);
	CHECK((fcntl(vol->dev.fd, F_GETFL) & O_ACCMODE) == O_RDONLY);
	CHECK(!vol->dev.blockdev);
	CHECK_EQ(vol->dev.size, 64 << 20);
	tux3_close(vol);
	CHECK_EQ(tux3_open(path, TUX3_OPEN_RDWR_NORECOVER, &vol), 0);
	CHECK(!vol->dev.readonly);
	CHECK((fcntl(vol->dev.fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	tux3_close(vol);
}

TEST(dev_pread_bounds)
{
	const char *path = scratch_copy("empty-4k");
	struct device dev;
	char msg[256];
	CHECK_EQ(dev_open(&dev, path, false, msg, sizeof(msg)), 0);
	uint8_t b[16];
	CHECK_EQ(dev_pread(&dev, b, 8, 4096), 0);
	CHECK(!memcmp(b, tux3_magic_2014, 8));
	CHECK_EQ(dev_pread(&dev, b, 16, (64 << 20) - 8), -EIO);
	CHECK_EQ(dev_pread(&dev, b, 1, 64 << 20), -EIO);
	dev_close(&dev);
	CHECK_EQ(dev.fd, -1);
	CHECK_EQ(dev_open(&dev, "/nonexistent", false, msg, sizeof(msg)),
		 -ENOENT);
}

int main(void)
{
	return run_tests("device");
}
