/* SPDX-License-Identifier: MIT */
/*
 * dsm_bigdiff.c - diffs larger than one message: W pages homed on node 0;
 * thread 1 writes the even bytes of every page and thread 2 the odd ones
 * (each diff a run per byte: two and a half times the page), or, with
 * -f, thread 1 writes every byte (one run of the whole page, header
 * included more than a page). Both on other nodes than the home (spread
 * round-robin: run on 3 nodes, or on 2 with thread 2 beside main). Then
 * a barrier, and main and every thread check every byte of every page.
 * Prints "dsm_bigdiff ok ..." or the first wrong byte, exit 1.
 *
 * -w W  pages (default 8); -f  thread 1 writes whole pages alone
 */
#include <earth_dsm.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct shared {
	earth_dsm_barrier_t bar;
	int bad;
};

static struct shared *g;
static uint8_t *pages;
static long npages = 8;
static size_t page_size = 4096;
static int full;

static uint8_t want(size_t i)
{
	return (uint8_t)(i * 131 + 7) | 1; /* never 0, never the twin's */
}

static void write_part(long id)
{
	size_t n = (size_t)npages * page_size;
	if (full) {
		if (id == 1)
			for (size_t i = 0; i < n; i++)
				pages[i] = want(i);
		return;
	}
	for (size_t i = (size_t)(id - 1); i < n; i += 2)
		pages[i] = want(i);
}

static void check(long id)
{
	size_t n = (size_t)npages * page_size;
	for (size_t i = 0; i < n; i++)
		if (pages[i] != want(i)) {
			fprintf(stderr,
				"dsm_bigdiff: thread %ld: byte %zu of page "
				"%zu is %u, not %u\n",
				id, i % page_size, i / page_size, pages[i],
				want(i));
			g->bad = 1;
			return;
		}
}

static void worker(void)
{
	long id = earth_dsm_thread_id();
	write_part(id);
	earth_dsm_barrier(g->bar, 3);
	check(id);
}

static int program(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "w:f")) != -1) {
		if (c == 'w')
			npages = atol(optarg);
		else if (c == 'f')
			full = 1;
		else
			return 2;
	}
	const char *ps = getenv("EARTH_DSM_PAGE");
	if (ps && *ps)
		page_size = (size_t)atol(ps);
	if (npages < 1 || npages > 1024) {
		fprintf(stderr, "dsm_bigdiff: -w 1..1024\n");
		return 2;
	}
	g = earth_dsm_alloc(sizeof(*g), EARTH_DSM_NODE, 0);
	pages = earth_dsm_alloc((size_t)npages * page_size, EARTH_DSM_NODE, 0);
	if (!g || !pages) {
		perror("earth_dsm_alloc");
		return 1;
	}
	g->bar = earth_dsm_barrier_new();
	EARTH_DSM_CREATE(worker);
	EARTH_DSM_CREATE(worker);
	earth_dsm_barrier(g->bar, 3);
	check(0);
	earth_dsm_wait_for_end(2);
	if (g->bad)
		return 1;
	printf("dsm_bigdiff ok nodes=%u pages=%ld page=%zu %s\n",
	       earth_dsm_nodes(), npages, page_size,
	       full ? "whole" : "alternate");
	return 0;
}

int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv, program);
}
