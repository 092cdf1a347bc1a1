/* SPDX-License-Identifier: MIT */
/*
 * earthrun: the job's shared mapping (same-host transport: a byte ring per
 * pair of nodes; global memory: one segment of M MiB per node, every node
 * maps them all) and the environment every node starts with: the transport
 * (tcp: EARTH_RENDEZVOUS at a free loopback port, whose listener node 0
 * inherits as EARTH_RENDEZVOUS_FD, and a random EARTH_JOB_SECRET from
 * /dev/urandom), the statistics/trace parts,
 * EARTH_GMEM_MB and EARTH_REMOTE.
 */
#define _GNU_SOURCE 1
#include "earthrun.h"
#include "base/jsonparts.h"
#include "net/shm_layout.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int er_map_job(const struct er_opts *o, struct er_job *j)
{
	uint64_t ring = (uint64_t)o->ring_kb * 1024;
	size_t total = shm_total((uint32_t)o->nodes, ring);
	uint64_t gseg = (uint64_t)o->gmem_mb * GMEM_UNIT;
	uint64_t goff = shm_gmem_off((uint32_t)o->nodes, ring);
	/* tcp nodes map their own segment privately: no shared one here. */
	uint64_t fsize = o->tcp ? total : goff + (uint64_t)o->nodes * gseg;
	/* The nodes' shared-memory regions (EARTH_DSM_MB, as the nodes read
	 * it; a value they refuse leaves none here, and they say why). The
	 * file is sparse: a program without shared memory costs nothing. */
	uint64_t dseg = 0, doff = 0;
	const char *dmb = getenv("EARTH_DSM_MB");
	char *end = NULL;
	unsigned long long mb = dmb ? strtoull(dmb, &end, 10) : 64;
	if (!o->tcp && (!dmb || (*dmb && !*end)) && mb >= 1 &&
	    mb <= DSM_REGION_MAX_MB) {
		dseg = (uint64_t)mb << 20;
		doff = (fsize + GMEM_ALIGN - 1) & ~(uint64_t)(GMEM_ALIGN - 1);
		fsize = doff + (uint64_t)o->nodes * dseg;
	}
	j->fd = memfd_create("earth-job", 0);
	if (j->fd < 0 || ftruncate(j->fd, (off_t)fsize) != 0) {
		fprintf(stderr,
			"earthrun: cannot create %llu bytes of shared "
			"memory: %s\n",
			(unsigned long long)fsize, strerror(errno));
		return 1;
	}
	struct shm_job *job =
	    mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, j->fd, 0);
	if (job == MAP_FAILED) {
		fprintf(stderr, "earthrun: cannot map the job: %s\n",
			strerror(errno));
		return 1;
	}
	job->nodes = (uint32_t)o->nodes;
	job->ring_bytes = ring;
	job->total = total;
	job->gmem_seg = o->tcp ? 0 : gseg;
	job->gmem_off = goff;
	job->dsm_seg = dseg;
	job->dsm_off = doff;
	atomic_store(&job->dead_node, -1);
	atomic_store(&job->dead_how, 0);
	job->magic = SHM_MAGIC;
	j->shm = job;
	return 0;
}

/* tcp: node 0's listener on a free loopback port, made here and handed
 * to node 0 (EARTH_RENDEZVOUS_FD) so that no other process can take the
 * port between; its port, or -1. */
static int rendezvous_listener(int *lfd)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	*lfd = fd;
	return ntohs(a.sin_port);
}

/* tcp: 32 random bytes as hex into out[65]. */
static int make_secret(char *out)
{
	unsigned char b[32];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	while (fd >= 0 && got < sizeof(b)) {
		ssize_t r = read(fd, b + got, sizeof(b) - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	if (got < sizeof(b))
		return -1;
	for (size_t k = 0; k < sizeof(b); k++)
		snprintf(out + 2 * k, 3, "%02x", b[k]);
	return 0;
}

/* EARTH_TRANSPORT, and for tcp where node 0 waits and the job's secret. */
static int transport_env(const struct er_opts *o, struct er_job *j)
{
	if (!o->tcp) {
		setenv("EARTH_TRANSPORT", "shm", 1);
		return 0;
	}
	char rv[64], secret[65];
	int port = rendezvous_listener(&j->rdv_fd);
	if (port < 0 || make_secret(secret)) {
		fprintf(stderr, "earthrun: --transport %s: cannot %s: %s\n",
			o->ucx ? "ucx" : "tcp",
			port < 0 ? "listen on a free loopback port"
				 : "read /dev/urandom",
			strerror(errno));
		return 1;
	}
	snprintf(rv, sizeof(rv), "127.0.0.1:%d", port);
	setenv("EARTH_TRANSPORT", o->ucx ? "ucx" : "tcp", 1);
	setenv("EARTH_RENDEZVOUS", rv, 1);
	setenv("EARTH_JOB_SECRET", secret, 1);
	return 0;
}

/* --stats=json and --trace: every node writes FILE.<id>.node<k>.part,
 * id being earthrun's pid (EARTH_PARTS_ID: two jobs writing the same FILE
 * do not share parts; the EARTH_*_PARTS variables tell the nodes a
 * launcher joins them), trace times count from one epoch. Refuses a file
 * that cannot be written now, without creating or changing it. */
static int observe_env(const char *stats_json, const char *trace)
{
	const char *files[2] = {stats_json, trace};
	for (int k = 0; k < 2; k++) {
		if (!files[k])
			continue;
		char part[4096], err[4400];
		if (!jsonparts_name(part, sizeof(part), files[k], UINT32_MAX,
				    MAX_NODES)) {
			fprintf(stderr, "earthrun: %s: path too long\n",
				files[k]);
			return -1;
		}
		if (jsonparts_check(files[k], err, sizeof(err))) {
			fprintf(stderr, "earthrun: %s %s\n",
				k ? "--trace" : "--stats-json", err);
			return -1;
		}
	}
	if (stats_json || trace) {
		char id[24];
		snprintf(id, sizeof(id), "%d", (int)getpid());
		setenv("EARTH_PARTS_ID", id, 1);
	}
	if (stats_json) {
		setenv("EARTH_STATS_JSON", stats_json, 1);
		setenv("EARTH_STATS_PARTS", "1", 1);
	}
	if (trace) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		char ebuf[32];
		snprintf(ebuf, sizeof(ebuf), "%lld",
			 (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
		setenv("EARTH_TRACE", trace, 1);
		setenv("EARTH_TRACE_PARTS", "1", 1);
		setenv("EARTH_TRACE_EPOCH_NS", ebuf, 1);
	}
	return 0;
}

/* What every node inherits (the per-node variables are set in the child:
 * earthrun_spawn.c). */
int er_map_env(const struct er_opts *o, struct er_job *j)
{
	j->rdv_fd = -1;
	if (o->stats)
		setenv("EARTH_STATS", "1", 1);
	int rc = transport_env(o, j);
	if (rc)
		return rc;
	if (observe_env(o->stats_json, o->trace) != 0)
		return 2;
	char gbuf[24];
	snprintf(gbuf, sizeof(gbuf), "%ld", o->gmem_mb);
	setenv("EARTH_GMEM_MB", gbuf, 1);
	if (o->remote)
		setenv("EARTH_REMOTE", o->remote, 1);
	if (o->eus)
		setenv("EARTH_EUS", o->eus, 1);
	return 0;
}
