/* SPDX-License-Identifier: MIT */
/*
 * aslr.c - the same address-space layout on every node without earthrun.
 * A node's static data (GLOBAL_AT on another node's statics) and the
 * global memory range (mapped at one fixed address on every node, which a
 * randomised layout may have taken) need every process of the job laid
 * out alike. earthrun starts its nodes without address-space
 * randomisation; a process started by a PMIx launcher (mpirun, srun
 * --mpi=pmix) turns it off itself: once, before anything else in
 * earth_run, it sets ADDR_NO_RANDOMIZE and executes itself again (same
 * pid, so the launcher keeps it). The flag it set is the guard: a process
 * that has it never executes itself again. EARTH_ASLR=1 keeps the
 * randomised layout: a setting of the table (base/settings.h), so
 * earth_run loads the settings first, then calls node_same_layout (a
 * bad value stops the node before it would execute itself again).
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "base/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#define CMDLINE_MAX (256u * 1024u)

/* argv from /proc/self/cmdline into a malloc'd vector (and its text). */
static char **own_argv(char **text)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = malloc(CMDLINE_MAX + 1);
	size_t got = 0;
	ssize_t k;
	while (buf && got < CMDLINE_MAX &&
	       (k = read(fd, buf + got, CMDLINE_MAX - got)) > 0)
		got += (size_t)k;
	close(fd);
	if (!buf || !got || got >= CMDLINE_MAX) {
		free(buf);
		return NULL;
	}
	buf[got] = 0;
	size_t n = 0;
	for (size_t i = 0; i < got; i++)
		n += buf[i] == 0;
	char **argv = calloc(n + 1, sizeof(*argv));
	if (!argv) {
		free(buf);
		return NULL;
	}
	size_t a = 0;
	for (size_t i = 0; i < got && a < n; i += strlen(buf + i) + 1)
		argv[a++] = buf + i;
	*text = buf;
	return argv;
}

void node_same_layout(void)
{
	if (!getenv("PMIX_RANK") || earth_setting_on(EARTH_SET_ASLR))
		return;
	int cur = personality(0xffffffff);
	if (cur < 0 || (cur & ADDR_NO_RANDOMIZE))
		return;
	if (personality((unsigned long)cur | ADDR_NO_RANDOMIZE) < 0 ||
	    !(personality(0xffffffff) & ADDR_NO_RANDOMIZE))
		return; /* not allowed here: gmem_open says what fails */
	char *text = NULL;
	char **argv = own_argv(&text);
	if (argv) {
		fflush(NULL);
		execv("/proc/self/exe", argv);
	}
	int e = errno;
	fprintf(stderr,
		"earth: cannot start again without address-space "
		"randomisation (%s): static data and global memory may lie "
		"at other addresses on other nodes\n",
		argv ? strerror(e) : "cannot read /proc/self/cmdline");
	free(argv);
	free(text);
	personality((unsigned long)cur);
}
