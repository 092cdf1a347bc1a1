/* SPDX-License-Identifier: MIT */
/*
 * multinode.c - a job that touches every remote path, for the multi-node
 * tests (run under earthrun). Node 0's main INVOKEs `visit` on every node;
 * each visit GETs a word from main's frame on node 0, DATA_RSYNCs a value
 * back, BLKMOVs a block from node 0 into its own frame and back to node 0
 * (chunked: larger than one message), and signals main's slot remotely.
 * Main checks every value and exits 0, or 1 naming what was wrong.
 *
 *   multinode [block-bytes]
 */
#include <earth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 64
#define BLK_MAX (256 * 1024)

struct visit_args {
	earth_gptr word;    /* long on node 0 */
	earth_gptr result;  /* long on node 0: where to put our answer */
	earth_gptr blk_src; /* block on node 0 */
	earth_gptr blk_dst; /* where node 0 wants the block back */
	long blk_len;
	earth_gslot done; /* main's slot on node 0 */
};
struct visit_frame {
	struct visit_args a;
	long got;
	earth_slot s_got, s_blk, s_back;
	unsigned char blk[BLK_MAX];
};
static void visit_entry(void *f);
static void visit_got(void *f);
static void visit_blk(void *f);
static void visit_back(void *f);
EARTH_THREADED_FUNCTION(visit, visit_entry, struct visit_frame,
			sizeof(struct visit_args));

static void visit_entry(void *frame)
{
	struct visit_frame *f = frame;
	earth_slot_init(&f->s_got, 1, 0, visit_got, f);
	earth_get_sync_l(f->a.word, &f->got, &f->s_got);
}

static void visit_got(void *frame)
{
	struct visit_frame *f = frame;
	long v = f->got * 100 + earth_node_id();
	earth_data_rsync_l(v, f->a.result, f->a.done);
	earth_slot_init(&f->s_blk, 1, 0, visit_blk, f);
	/* Pull the block from node 0 into this frame. */
	earth_blkmov_sync(f->a.blk_src, earth_to_global(f->blk),
			  (size_t)f->a.blk_len, &f->s_blk);
}

static void visit_blk(void *frame)
{
	struct visit_frame *f = frame;
	/* Push it back to node 0. The frame is the source: it must live
	 * until the move is done, so the move signals this frame. */
	earth_slot_init(&f->s_back, 1, 0, visit_back, f);
	earth_blkmov_sync(earth_to_global(f->blk), f->a.blk_dst,
			  (size_t)f->a.blk_len, &f->s_back);
}

static void visit_back(void *frame)
{
	struct visit_frame *f = frame;
	earth_rsync(f->a.done);
	EARTH_END_FUNCTION(f);
}

struct main_frame {
	struct earth_main_args a;
	long word, blk_len;
	long result[MAXN];
	earth_slot all;
	unsigned char src[BLK_MAX];
	unsigned char back[MAXN][BLK_MAX];
};
static void main_entry(void *f);
static void main_all(void *f);
EARTH_THREADED_FUNCTION(mn_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	uint32_t n = earth_num_nodes();
	m->blk_len = m->a.argc > 1 ? atol(m->a.argv[1]) : 100000;
	if (n > MAXN || m->blk_len < 0 || m->blk_len > BLK_MAX) {
		fprintf(stderr, "multinode: at most %d nodes, block 0..%d\n",
			MAXN, BLK_MAX);
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	m->word = 7;
	for (long i = 0; i < m->blk_len; i++)
		m->src[i] = (unsigned char)(i * 31 + 5);
	/* Two signals per node: the DATA_RSYNC and the returned block. */
	earth_slot_init(&m->all, 2 * (int32_t)n, 0, main_all, m);
	for (uint32_t k = 0; k < n; k++) {
		m->result[k] = -1;
		memset(m->back[k], 0, (size_t)m->blk_len);
		struct visit_args va = {earth_to_global(&m->word),
					earth_to_global(&m->result[k]),
					earth_to_global(m->src),
					earth_to_global(m->back[k]),
					m->blk_len,
					earth_slot_global(&m->all)};
		earth_invoke(k, &visit, &va, sizeof(va));
	}
}

static void main_all(void *frame)
{
	struct main_frame *m = frame;
	int bad = 0;
	for (uint32_t k = 0; k < earth_num_nodes(); k++) {
		if (m->result[k] != 700 + (long)k) {
			fprintf(stderr,
				"multinode: node %u answered %ld, want "
				"%ld\n",
				k, m->result[k], 700 + (long)k);
			bad = 1;
		}
		if (memcmp(m->back[k], m->src, (size_t)m->blk_len)) {
			fprintf(stderr,
				"multinode: block from node %u differs\n", k);
			bad = 1;
		}
	}
	printf("multinode: %u nodes, %ld-byte blocks: %s\n", earth_num_nodes(),
	       m->blk_len, bad ? "WRONG" : "all correct");
	earth_set_exit_status(bad);
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &mn_main);
}
