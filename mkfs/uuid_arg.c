/* The -U argument: a UUID made here, cleared, or given. */
#include <string.h>
#include <uuid.h>
#include "uuid_arg.h"

int uuid_from_arg(const char *arg, uint8_t uuid[16])
{
	if (!strcmp(arg, "random"))
		uuid_generate_random(uuid);
	else if (!strcmp(arg, "time"))
		uuid_generate_time(uuid);
	else if (!strcmp(arg, "clear"))
		memset(uuid, 0, 16);
	else if (uuid_parse(arg, uuid))
		return -1;
	return 0;
}
