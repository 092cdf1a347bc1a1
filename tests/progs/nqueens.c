/* SPDX-License-Identifier: MIT */
/*
 * nqueens.c - N-Queens solutions counted with one threaded function per
 * board prefix down to `depth` rows (TOKEN per child, the rest counted
 * sequentially), spread over the nodes by load balancing; checked against
 * the known counts (OEIS A000170).
 *
 *   nqueens [n] [depth]   prints "nqueens: n=N solutions=S correct"
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>

#include "nqueens_tf.h"

static const long known[] = {1,	 1,   0,   0,	 2,	10,    4,     40,
			     92, 352, 724, 2680, 14200, 73712, 365596};

struct main_frame {
	struct earth_main_args a;
	int n;
	long result;
	earth_slot done;
};
static void main_done(void *frame)
{
	struct main_frame *m = frame;
	int ok = m->result == known[m->n];
	printf("nqueens: n=%d solutions=%ld %s\n", m->n, m->result,
	       ok ? "correct" : "WRONG");
	earth_set_exit_status(!ok);
	EARTH_END_FUNCTION(m);
}
static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	m->n = m->a.argc > 1 ? atoi(m->a.argv[1]) : 10;
	int depth = m->a.argc > 2 ? atoi(m->a.argv[2]) : 4;
	if (m->n < 1 || m->n > 14 || depth < 0) {
		fprintf(stderr, "nqueens: n must be 1..14, depth >= 0\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	earth_slot_init(&m->done, 1, 0, main_done, m);
	nqueens_tf_start(m->n, depth, &m->result, &m->done);
}
EARTH_THREADED_FUNCTION(nq_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &nq_main);
}
