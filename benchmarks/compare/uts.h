/* SPDX-License-Identifier: MIT */
/*
 * uts.h - Unbalanced Tree Search (Olivier et al., LCPC 2006): the trees,
 * shared by the EARTH program (earth_uts.c), the oneTBB one (tbb_uts.cpp)
 * and their sequential count (uts_count_seq). C and C++.
 *
 * A node is the 20-byte state of SHA-1 (OpenSSL libcrypto): the root's is
 * SHA1(16 zero bytes, seed as 4 bytes big-endian), child i's is
 * SHA1(parent's state, i as 4 bytes big-endian). Its random number is the
 * state's last 4 bytes, big-endian, & 0x7fffffff, as u = rand / 2^31.
 *   binomial (BIN): the root has floor(b0) children; any other node m
 *                   children when u < q, else none.
 *   geometric (GEO): b = b0 (FIXED: below depth gen_mx, else 0; LINEAR:
 *                   b0 (1 - d / gen_mx); EXPDEC: b0 d^(-ln b0 / ln
 *                   gen_mx); CYCLIC: b0^sin(2 pi d / gen_mx), 0 beyond
 *                   5 gen_mx); p = 1 / (1 + b); floor(ln(1 - u) / ln(1 -
 *                   p)) children, at most 100. The root uses b0.
 * The published trees (UTS sample_trees.sh): T1 = GEO FIXED d 10, b 4,
 * seed 19: 4,130,071 nodes; T3 = BIN b 2000, q 0.124875, m 8, seed 42:
 * 4,112,897 nodes. The small trees s1 and s3 have the same shapes, for
 * tests; their counts come from uts_count_seq.
 *
 * Tasks. A task covers children [lo, hi) of one node: more than
 * UTS_RANGE_LEAF of them, it splits the range in two tasks; else it counts
 * each child and starts one task for the children of each child that has
 * some. The same shape in every version.
 */
#ifndef EARTH_UTS_H
#define EARTH_UTS_H

/* SHA1_Init/Update/Final: the direct implementation; the one-shot SHA1()
 * of OpenSSL 3 looks the algorithm up by name on every call. */
#define OPENSSL_API_COMPAT 0x10101000L
#include <openssl/sha.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

enum uts_type { UTS_BIN, UTS_GEO };
enum uts_shape { UTS_LINEAR, UTS_EXPDEC, UTS_CYCLIC, UTS_FIXED };

struct uts_tree {
	const char *name;
	enum uts_type type;
	enum uts_shape shape; /* GEO */
	double b0;
	int gen_mx; /* GEO */
	double q;   /* BIN */
	int m;	    /* BIN */
	uint32_t seed;
	long nodes; /* published count, or 0: compare with uts_count_seq */
};

static const struct uts_tree uts_trees[] = {
    {"t1", UTS_GEO, UTS_FIXED, 4, 10, 0, 0, 19, 4130071},
    {"t3", UTS_BIN, UTS_FIXED, 2000, 0, 0.124875, 8, 42, 4112897},
    {"s1", UTS_GEO, UTS_FIXED, 4, 7, 0, 0, 19, 0},
    {"s3", UTS_BIN, UTS_FIXED, 200, 0, 0.124, 8, 42, 0},
};
#define UTS_NTREES (sizeof(uts_trees) / sizeof(uts_trees[0]))
#define UTS_MAX_CHILDREN 100 /* GEO */
#define UTS_RANGE_LEAF 4

static inline const struct uts_tree *uts_tree_named(const char *name)
{
	for (unsigned k = 0; k < UTS_NTREES; k++)
		if (strcmp(uts_trees[k].name, name) == 0)
			return &uts_trees[k];
	return 0;
}

struct uts_node {
	unsigned char s[20];
	int32_t height;
};

static inline void uts_sha1(const unsigned char *a, size_t an, uint32_t v,
			    unsigned char out[20])
{
	unsigned char be[4] = {(unsigned char)(v >> 24),
			       (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v};
	SHA_CTX c;
	SHA1_Init(&c);
	SHA1_Update(&c, a, an);
	SHA1_Update(&c, be, 4);
	SHA1_Final(out, &c);
}

static inline struct uts_node uts_root(const struct uts_tree *t)
{
	static const unsigned char zero[16] = {0};
	struct uts_node r;
	uts_sha1(zero, sizeof(zero), t->seed, r.s);
	r.height = 0;
	return r;
}

/* Child i of p, written into *c (where a task's arguments are built:
 * nothing copies the fresh digest while its stores are still in flight). */
static inline void uts_child_at(const struct uts_node *p, uint32_t i,
				struct uts_node *c)
{
	uts_sha1(p->s, sizeof(p->s), i, c->s);
	c->height = p->height + 1;
}

static inline struct uts_node uts_child(const struct uts_node *p, uint32_t i)
{
	struct uts_node c;
	uts_child_at(p, i, &c);
	return c;
}

static inline double uts_u(const struct uts_node *n)
{
	uint32_t r = ((uint32_t)n->s[16] << 24) | ((uint32_t)n->s[17] << 16) |
		     ((uint32_t)n->s[18] << 8) | n->s[19];
	return (double)(r & 0x7fffffffu) / 2147483648.0;
}

static inline int uts_num_children(const struct uts_tree *t,
				   const struct uts_node *n)
{
	int d = n->height;
	if (t->type == UTS_BIN) {
		if (d == 0)
			return (int)floor(t->b0);
		return uts_u(n) < t->q ? t->m : 0;
	}
	double b = t->b0;
	if (d > 0) {
		switch (t->shape) {
		case UTS_LINEAR:
			b = t->b0 * (1.0 - (double)d / t->gen_mx);
			break;
		case UTS_EXPDEC:
			b = t->b0 * pow((double)d,
					-log(t->b0) / log((double)t->gen_mx));
			break;
		case UTS_CYCLIC:
			b = d > 5 * t->gen_mx
				? 0
				: pow(t->b0, sin(2.0 * M_PI * d / t->gen_mx));
			break;
		case UTS_FIXED:
			b = d < t->gen_mx ? t->b0 : 0;
			break;
		}
	}
	if (b <= 0)
		return 0;
	double p = 1.0 / (1.0 + b);
	int k = (int)floor(log(1.0 - uts_u(n)) / log(1.0 - p));
	return k > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : k;
}

/* The nodes of the subtree under children [lo, hi) of p, sequentially. */
static inline long uts_count_range_seq(const struct uts_tree *t,
				       const struct uts_node *p, int lo, int hi)
{
	long c = 0;
	for (int i = lo; i < hi; i++) {
		struct uts_node k = uts_child(p, (uint32_t)i);
		c += 1 + uts_count_range_seq(t, &k, 0, uts_num_children(t, &k));
	}
	return c;
}

/* The whole tree, sequentially. */
static inline long uts_count_seq(const struct uts_tree *t)
{
	struct uts_node r = uts_root(t);
	return 1 + uts_count_range_seq(t, &r, 0, uts_num_children(t, &r));
}

#endif /* EARTH_UTS_H */
