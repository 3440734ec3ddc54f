// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A job's key file (libnetagg.h, netagg_key_read()), read as "netagg job
 * add ... key FILE" reads it: the one reader of the CLI, the tools, the MPI
 * library and the Python package. In an object of its own, so that a
 * program linking libnetagg.a for it alone (the CLI) takes nothing else.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "libnetagg.h"

/* Read whole, at most two bytes past the longest form: a longer file is malformed. */
int netagg_key_read(const char *path, uint8_t key[NETAGG_KEY_LEN])
{
	unsigned char buf[2 * NETAGG_KEY_LEN + 2];
	size_t n, i = 0;
	int err = 0;
	FILE *f;

	if (!path || !key)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	if (ferror(f))
		err = -EIO;
	fclose(f);
	if (!err && n == NETAGG_KEY_LEN) {
		memcpy(key, buf, n);
	} else if (!err) {
		if (n == 2 * NETAGG_KEY_LEN + 1 && buf[n - 1] == '\n')
			n--;
		for (; n == 2 * NETAGG_KEY_LEN && i < NETAGG_KEY_LEN; i++) {
			if (!isxdigit(buf[2 * i]) || !isxdigit(buf[2 * i + 1]))
				break;
			sscanf((const char *)buf + 2 * i, "%2hhx", &key[i]);
		}
		if (n != 2 * NETAGG_KEY_LEN || i != NETAGG_KEY_LEN)
			err = -EBADMSG;
	}
	explicit_bzero(buf, sizeof(buf));
	if (err)
		explicit_bzero(key, NETAGG_KEY_LEN);
	return err;
}
