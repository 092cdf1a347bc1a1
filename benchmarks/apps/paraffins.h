/* SPDX-License-Identifier: MIT */
/*
 * paraffins.h - the Salishan paraffins problem, shared by paraffins.tc and
 * paraffins_seq.c: generate every paraffin molecule C_iH_2i+2, i = 1..n,
 * each exactly once.
 *
 * A radical of size m (C_mH_2m+1) is a carbon with three sub-radicals of
 * sizes a <= b <= c, a + b + c = m - 1 (size 0 is H), in canonical order
 * (equal sizes: non-decreasing indices). A molecule has a unique centre:
 * a carbon with four radicals of sizes a <= b <= c <= d summing to i - 1,
 * each <= (i - 1) / 2 (CCP), or for even i a bond between two radicals of
 * size i / 2 (BCP). Radicals are stored (each node builds the same table);
 * molecules are enumerated in *tasks* (one centre shape, a range of
 * indices of its largest radical) and each molecule is hashed from the
 * numbers of its radicals: a size's answer is its molecule count and the
 * sum of the hashes (mod 2^64, so any task order gives the same sum).
 *
 * Checks: the counts against OEIS A000602 (molecules, n <= 24) and
 * A000598 (radicals), and every count against the counting formula
 * (multisets of radicals), which enumerates nothing.
 */
#ifndef APPS_PARAFFINS_H
#define APPS_PARAFFINS_H

#include "apps.h"

#include <stdint.h>

#define PAR_MAX_N 28
#define PAR_MAX_RAD (PAR_MAX_N / 2) /* largest radical a molecule needs */
#define PAR_POOL 33000		    /* radicals of sizes 0..14: 32055 */
#define PAR_MAX_TASKS 40000
#define PAR_CHUNKS 16 /* tasks per centre shape, at most */

/* OEIS A000602 (molecules) and A000598 (radicals), index = size. */
static const long par_known_mol[25] = {
    1,	   1,	   1,	   1,	   2,	    3,	     5,	      9,     18,
    35,	   75,	   159,	   355,	   802,	    1858,    4347,    10359, 24894,
    60523, 148284, 366319, 910726, 2278658, 5731580, 14490245};
static const long par_known_rad[PAR_MAX_RAD + 1] = {
    1, 1, 1, 2, 4, 8, 17, 39, 89, 211, 507, 1238, 3057, 7639, 19241};

struct par_task {
	unsigned char bcp;	  /* 1: bond-centred (size a twice)       */
	unsigned char a, b, c, d; /* radical sizes, a <= b <= c <= d       */
	int lo, hi;		  /* range of indices of the last radical  */
};

/* This node's tables (built once per node by par_build). */
static struct {
	int n;			   /* built for sizes 1..n; 0: not yet    */
	int nrad[PAR_MAX_RAD + 1]; /* radicals of each size               */
	int off[PAR_MAX_RAD + 1];  /* first radical number of each size   */
	uint32_t rad[PAR_POOL][3]; /* sub-radical numbers of each radical */
	int first[PAR_MAX_N + 2];  /* tasks of size i: first[i]..first[i+1] */
	struct par_task task[PAR_MAX_TASKS];
} par;

/* Radicals of size m from the smaller ones, in canonical order. */
static inline void par_radicals(int m)
{
	int k = par.off[m];
	for (int a = 0; a <= (m - 1) / 3; a++)
		for (int b = a; b <= (m - 1 - a) / 2; b++) {
			int c = m - 1 - a - b;
			for (int i = 0; i < par.nrad[a]; i++)
				for (int j = a == b ? i : 0; j < par.nrad[b];
				     j++)
					for (int l = b == c ? j : 0;
					     l < par.nrad[c]; l++) {
						par.rad[k][0] =
						    (uint32_t)(par.off[a] + i);
						par.rad[k][1] =
						    (uint32_t)(par.off[b] + j);
						par.rad[k][2] =
						    (uint32_t)(par.off[c] + l);
						k++;
					}
		}
	par.nrad[m] = k - par.off[m];
	if (m < PAR_MAX_RAD)
		par.off[m + 1] = k;
}

static inline void par_add_tasks(int *nt, int bcp, int a, int b, int c, int d)
{
	int count = par.nrad[d];
	int chunks = count < PAR_CHUNKS ? count : PAR_CHUNKS;
	for (int k = 0; k < chunks; k++) {
		struct par_task *t = &par.task[(*nt)++];
		t->bcp = (unsigned char)bcp;
		t->a = (unsigned char)a, t->b = (unsigned char)b;
		t->c = (unsigned char)c, t->d = (unsigned char)d;
		t->lo = (int)((long)count * k / chunks);
		t->hi = (int)((long)count * (k + 1) / chunks);
	}
}

/* Builds the radicals and the task list for sizes 1..n (n <= PAR_MAX_N);
 * does nothing if they are built for n already. */
static inline void par_build(int n)
{
	if (par.n == n)
		return;
	int maxr = n / 2;
	par.nrad[0] = 1; /* H */
	par.off[0] = 0;
	par.off[1] = 1;
	par.rad[0][0] = par.rad[0][1] = par.rad[0][2] = 0;
	for (int m = 1; m <= maxr; m++)
		par_radicals(m);
	int nt = 0;
	for (int i = 1; i <= n; i++) {
		par.first[i] = nt;
		int h = (i - 1) / 2;
		for (int a = 0; a <= (i - 1) / 4; a++)
			for (int b = a; b <= (i - 1 - a) / 3; b++)
				for (int c = b; c <= (i - 1 - a - b) / 2; c++) {
					int d = i - 1 - a - b - c;
					if (d <= h)
						par_add_tasks(&nt, 0, a, b, c,
							      d);
				}
		if (i % 2 == 0)
			par_add_tasks(&nt, 1, i / 2, i / 2, i / 2, i / 2);
	}
	par.first[n + 1] = nt;
	par.n = n;
}

/* Enumerates the molecules of task t: adds their number to *count and
 * their hashes to *hash. */
static inline void par_run_task(const struct par_task *t, long *count,
				uint64_t *hash)
{
	long cnt = 0;
	uint64_t h = 0;
	int a = t->a, b = t->b, c = t->c, d = t->d;
	if (t->bcp) {
		for (int j = t->lo; j < t->hi; j++)
			for (int i = 0; i <= j; i++) {
				uint64_t x =
				    apps_mix64(~(uint64_t)(par.off[a] + i));
				h += apps_mix64(x + (uint64_t)(par.off[a] + j));
				cnt++;
			}
	} else {
		for (int l = t->lo; l < t->hi; l++)
			for (int k = 0; k < (c == d ? l + 1 : par.nrad[c]); k++)
				for (int j = 0;
				     j < (b == c ? k + 1 : par.nrad[b]); j++) {
					uint64_t x = apps_mix64(
					    (uint64_t)(par.off[d] + l));
					x = apps_mix64(
					    x + (uint64_t)(par.off[c] + k));
					x = apps_mix64(
					    x + (uint64_t)(par.off[b] + j));
					int top = a == b ? j + 1 : par.nrad[a];
					for (int i = 0; i < top; i++) {
						h += apps_mix64(
						    x +
						    (uint64_t)(par.off[a] + i));
						cnt++;
					}
				}
	}
	*count += cnt;
	*hash += h;
}

/* ---- the counting formula (independent of the enumeration) ---- */

/* Multisets of k items out of r kinds: C(r + k - 1, k). */
static inline long par_mc(long r, int k)
{
	long v = 1;
	for (int j = 0; j < k; j++)
		v = v * (r + j) / (j + 1);
	return v;
}

/* Product over groups of equal sizes in the sorted list s[0..len). */
static inline long par_groups(const long *r, const int *s, int len)
{
	long v = 1;
	for (int i = 0; i < len;) {
		int j = i;
		while (j < len && s[j] == s[i])
			j++;
		v *= par_mc(r[s[i]], j - i);
		i = j;
	}
	return v;
}

/* Molecule counts by size 1..n into mol[] (radical counts into r[]). */
static inline void par_formula(int n, long r[PAR_MAX_N + 1],
			       long mol[PAR_MAX_N + 1])
{
	r[0] = 1;
	for (int m = 1; m <= n; m++) {
		r[m] = 0;
		for (int a = 0; a <= (m - 1) / 3; a++)
			for (int b = a; b <= (m - 1 - a) / 2; b++) {
				int s[3] = {a, b, m - 1 - a - b};
				r[m] += par_groups(r, s, 3);
			}
	}
	for (int i = 1; i <= n; i++) {
		mol[i] = i % 2 == 0 ? par_mc(r[i / 2], 2) : 0;
		for (int a = 0; a <= (i - 1) / 4; a++)
			for (int b = a; b <= (i - 1 - a) / 3; b++)
				for (int c = b; c <= (i - 1 - a - b) / 2; c++) {
					int s[4] = {a, b, c, i - 1 - a - b - c};
					if (s[3] <= (i - 1) / 2)
						mol[i] += par_groups(r, s, 4);
				}
	}
}

/*
 * Prints the answer for counts mol[1..n] and hashes hash[1..n] and checks
 * them: the radicals built, every count against the formula and OEIS.
 * Returns the exit status (apps_verdict).
 */
static inline int par_report(int n, const long *mol, const uint64_t *hash,
			     double ms)
{
	long r[PAR_MAX_N + 1], want[PAR_MAX_N + 1], total = 0;
	uint64_t h = 0;
	int ok = 1;
	par_formula(n, r, want);
	for (int i = 1; i <= n; i++) {
		total += mol[i];
		h = apps_mix64(h + hash[i]);
		if (mol[i] != want[i] ||
		    (i <= 24 && mol[i] != par_known_mol[i]))
			ok = 0;
	}
	for (int m = 0; m <= n / 2; m++)
		if (par.nrad[m] != r[m] || par.nrad[m] != par_known_rad[m])
			ok = 0;
	apps_answer("paraffins(%d): %ld molecules of size %d, %ld of sizes "
		    "1..%d, hash %016llx",
		    n, mol[n], n, total, n, (unsigned long long)h);
	return apps_verdict(ms, ok,
			    ok ? "counts equal OEIS A000602/A000598 and the "
				 "counting formula"
			       : "a count differs from OEIS A000602/A000598 or "
				 "the counting formula");
}

#endif /* APPS_PARAFFINS_H */
