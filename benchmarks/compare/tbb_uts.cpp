// SPDX-License-Identifier: MIT
// tbb_uts.cpp - oneTBB task_group version of Unbalanced Tree Search, the
// other side of earth_uts.c in compare.sh: the same trees (uts.h) and the
// same tasks (a range of a node's children, split in two halves or
// counted with one task per child that has children). Checks the count
// against the published one (t1, t3) or the sequential count (s1, s3) and
// prints the median wall time of REPS runs and nodes per second.
//
//   tbb_uts TREE THREADS REPS
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "uts.h"

static long range(const uts_tree *t, const uts_node &p, int lo, int hi)
{
	long sum[UTS_RANGE_LEAF] = {0};
	tbb::task_group g;
	if (hi - lo > UTS_RANGE_LEAF) {
		int mid = lo + (hi - lo) / 2;
		g.run([&] { sum[0] = range(t, p, lo, mid); });
		g.run([&] { sum[1] = range(t, p, mid, hi); });
		g.wait();
		return sum[0] + sum[1];
	}
	long count = 0;
	int kids = 0;
	for (int i = lo; i < hi; i++) {
		uts_node c = uts_child(&p, (uint32_t)i);
		int k = uts_num_children(t, &c);
		count++;
		if (k > 0) {
			long *s = &sum[kids++];
			g.run([t, c, k, s] { *s = range(t, c, 0, k); });
		}
	}
	g.wait();
	for (int k = 0; k < kids; k++)
		count += sum[k];
	return count;
}

int main(int argc, char **argv)
{
	const uts_tree *t = argc == 4 ? uts_tree_named(argv[1]) : nullptr;
	int threads = argc == 4 ? atoi(argv[2]) : 0;
	int reps = argc == 4 ? atoi(argv[3]) : 0;
	if (!t || threads < 1 || reps < 1) {
		fprintf(stderr, "usage: tbb_uts TREE THREADS REPS (TREE one of "
				"t1 t3 s1 s3)\n");
		return 2;
	}
	tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
			       (size_t)threads);
	long want = t->nodes ? t->nodes : uts_count_seq(t);
	std::vector<double> ns;
	for (int r = 0; r < reps; r++) {
		auto t0 = std::chrono::steady_clock::now();
		uts_node root = uts_root(t);
		long got = 1 + range(t, root, 0, uts_num_children(t, &root));
		auto t1 = std::chrono::steady_clock::now();
		if (got != want) {
			printf("tbb_uts: %s: %ld nodes, want %ld: WRONG\n",
			       t->name, got, want);
			return 1;
		}
		ns.push_back(
		    std::chrono::duration<double, std::nano>(t1 - t0).count());
	}
	std::sort(ns.begin(), ns.end());
	double med = ns[ns.size() / 2];
	printf("tbb uts %s threads=%d: nodes=%ld correct, median %.0f ns, "
	       "nodes/s %.0f\n",
	       t->name, threads, want, med, (double)want / med * 1e9);
	return 0;
}
