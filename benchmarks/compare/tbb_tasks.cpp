// SPDX-License-Identifier: MIT
// tbb_tasks.cpp - oneTBB task_group versions of the two task benchmarks
// that compare.sh runs against EARTH TOKEN (earth_tasks.c): fib(n) with
// one task per call, and N-Queens with one task per board prefix down to
// `depth` rows (counted sequentially below), the same shapes as the
// threaded functions. Prints the median wall time of REPS runs and checks
// the answers.
//
//   tbb_tasks fib N THREADS REPS      tbb_tasks nqueens N DEPTH THREADS REPS
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static long fib(int n)
{
	if (n < 2)
		return n;
	long x = 0, y = 0;
	tbb::task_group g;
	g.run([&] { x = fib(n - 1); });
	g.run([&] { y = fib(n - 2); });
	g.wait();
	return x + y;
}

static long fib_seq(int n) { return n < 2 ? n : fib_seq(n - 1) + fib_seq(n - 2); }

// At a 64-byte boundary, as the EARTH side's nqueens_count
// (threaded-c/examples/nqueens_tf.c): one machine code at one alignment.
__attribute__((aligned(64))) static long count(int n, int row, unsigned cols, unsigned d1, unsigned d2)
{
	if (row == n)
		return 1;
	long c = 0;
	unsigned all = (1u << n) - 1, free = all & ~(cols | d1 | d2);
	while (free) {
		unsigned bit = free & -free;
		free ^= bit;
		c += count(n, row + 1, cols | bit, ((d1 | bit) << 1) & all,
			   (d2 | bit) >> 1);
	}
	return c;
}

static long nq(int n, int depth, int row, unsigned cols, unsigned d1, unsigned d2)
{
	if (row >= depth || row == n)
		return count(n, row, cols, d1, d2);
	unsigned all = (1u << n) - 1, free = all & ~(cols | d1 | d2);
	long sum[32] = {0};
	tbb::task_group g;
	for (int k = 0; free; k++) {
		unsigned bit = free & -free;
		free ^= bit;
		g.run([=, &sum] {
			sum[k] = nq(n, depth, row + 1, cols | bit,
				    ((d1 | bit) << 1) & all, (d2 | bit) >> 1);
		});
	}
	g.wait();
	long s = 0;
	for (long v : sum)
		s += v;
	return s;
}

int main(int argc, char **argv)
{
	bool isfib = argc == 5 && !strcmp(argv[1], "fib");
	bool isnq = argc == 6 && !strcmp(argv[1], "nqueens");
	if (!isfib && !isnq) {
		fprintf(stderr, "usage: tbb_tasks fib N THREADS REPS | "
				"tbb_tasks nqueens N DEPTH THREADS REPS\n");
		return 2;
	}
	int n = atoi(argv[2]), depth = isnq ? atoi(argv[3]) : 0;
	int threads = atoi(argv[isnq ? 4 : 3]), reps = atoi(argv[isnq ? 5 : 4]);
	if (n < 1 || n > (isnq ? 16 : 45) || threads < 1 || reps < 1) {
		fprintf(stderr, "tbb_tasks: bad arguments\n");
		return 2;
	}
	tbb::global_control gc(tbb::global_control::max_allowed_parallelism,
			       (size_t)threads);
	long want = isfib ? fib_seq(n) : count(n, 0, 0, 0, 0);
	std::vector<double> t;
	for (int r = 0; r < reps; r++) {
		auto t0 = std::chrono::steady_clock::now();
		long got = isfib ? fib(n) : nq(n, depth, 0, 0, 0, 0);
		auto t1 = std::chrono::steady_clock::now();
		if (got != want) {
			printf("tbb_tasks: WRONG %s(%d) = %ld, want %ld\n",
			       argv[1], n, got, want);
			return 1;
		}
		t.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
	}
	std::sort(t.begin(), t.end());
	printf("tbb %s n=%d threads=%d: %ld correct, median %.0f ns\n", argv[1],
	       n, threads, want, t[t.size() / 2]);
	return 0;
}
