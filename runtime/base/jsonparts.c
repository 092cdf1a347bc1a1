/* SPDX-License-Identifier: MIT */
/*
 * jsonparts.c - see jsonparts.h.
 */
#define _GNU_SOURCE 1
#include "base/jsonparts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *jsonparts_name(char *buf, size_t size, const char *base,
		     unsigned long job, unsigned k)
{
	int r = snprintf(buf, size, "%s.%lu.node%u.part", base, job, k);
	return r < 0 || (size_t)r >= size ? NULL : buf;
}

/* The temporary file next to out. */
static bool tmp_name(char *buf, size_t size, const char *out)
{
	int r = snprintf(buf, size, "%s.tmp%d", out, (int)getpid());
	return r >= 0 && (size_t)r < size;
}

/* Whether out is there and not a regular file (written in place). */
static bool in_place(const char *out)
{
	struct stat st;
	return stat(out, &st) == 0 && !S_ISREG(st.st_mode) &&
	       !S_ISDIR(st.st_mode);
}

int jsonparts_check(const char *out, char *err, size_t errlen)
{
	struct stat st;
	if (stat(out, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: cannot write it: %s", out,
				 strerror(EISDIR));
			return -1;
		}
		if (!S_ISREG(st.st_mode))
			return 0; /* written in place at the end */
		if (access(out, W_OK) != 0) {
			snprintf(err, errlen, "%s: cannot write it: %s", out,
				 strerror(errno));
			return -1;
		}
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "%s: cannot write it: %s", out,
			 strerror(errno));
		return -1;
	}
	/* The temporary file must be possible next to it. */
	char tmp[4096];
	if (!tmp_name(tmp, sizeof(tmp), out)) {
		snprintf(err, errlen, "%s: path too long", out);
		return -1;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot write it: %s", out,
			 strerror(errno));
		return -1;
	}
	close(fd);
	unlink(tmp);
	return 0;
}

void jsonparts_remove(const char *const *parts, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (parts[k])
			unlink(parts[k]);
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int jsonparts_join(const char *out, const char *const *parts, unsigned n,
		   const char *head, const char *tail, int missing_ok,
		   char *err, size_t errlen)
{
	char tmp[4096] = "";
	const bool direct = in_place(out);
	int fd = -1;
	/* One part with nothing around it is the whole file already: renamed
	 * onto out (next to it, so one file system), not copied. */
	if (!direct && n == 1 && !*head && !*tail && rename(parts[0], out) == 0)
		return 0;
	if (!direct && !tmp_name(tmp, sizeof(tmp), out)) {
		tmp[0] = 0;
		snprintf(err, errlen, "%s: path too long", out);
		goto fail;
	}
	/* A device or FIFO: opened as it is (no O_CREAT, no O_TRUNC). */
	fd = direct ? open(out, O_WRONLY | O_CLOEXEC)
		    : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", out,
			 strerror(errno));
		goto fail;
	}
	if (write_all(fd, head, strlen(head)))
		goto write_failed;
	int first = 1;
	char buf[65536];
	for (unsigned k = 0; k < n; k++) {
		int in = open(parts[k], O_RDONLY | O_CLOEXEC);
		if (in < 0) {
			if (missing_ok && errno == ENOENT)
				continue;
			snprintf(err, errlen, "%s: cannot read %s: %s", out,
				 parts[k], strerror(errno));
			goto fail;
		}
		ssize_t r;
		int empty = 1;
		while ((r = read(in, buf, sizeof(buf))) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				snprintf(err, errlen, "%s: cannot read %s: %s",
					 out, parts[k], strerror(errno));
				close(in);
				goto fail;
			}
			if ((empty && !first && write_all(fd, ",\n", 2)) ||
			    write_all(fd, buf, (size_t)r)) {
				close(in);
				goto write_failed;
			}
			empty = 0;
		}
		first &= empty;
		close(in);
	}
	if (write_all(fd, tail, strlen(tail)))
		goto write_failed;
	int c = close(fd);
	fd = -1;
	if (c != 0)
		goto write_failed;
	if (!direct && rename(tmp, out) != 0) {
		snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, out,
			 strerror(errno));
		goto fail;
	}
	jsonparts_remove(parts, n);
	return 0;
write_failed:
	snprintf(err, errlen, "cannot write %s: %s", out, strerror(errno));
fail:
	if (fd >= 0)
		close(fd);
	if (!direct && tmp[0])
		unlink(tmp);
	jsonparts_remove(parts, n);
	return -1;
}
