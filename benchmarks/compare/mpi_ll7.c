/* SPDX-License-Identifier: MIT */
/*
 * mpi_ll7.c - Livermore Loop 7 with nonblocking prefetch in MPI, the
 * comparison for benchmarks/ll7 in compare.sh: rank 1 owns Y, rank 0 owns
 * U and Z and runs the loop. Per fiber size s (log-spaced, 2 per decade),
 * every repetition times on rank 0: the plain loop with Y local (seq);
 * MPI_Recv of all of Y, then the loop (fetch first); and the prefetch
 * version: an MPI_Irecv posted for every chunk of s iterations up front
 * (rank 1 sends them all with MPI_Isend), then for each chunk in order
 * MPI_Wait and compute. Without an MPI progress thread, data moves only
 * while rank 0 is inside MPI. Every result is checked bit for bit against
 * the sequential checksum. Prints, like ll7, the percentage
 * (prefetch - seq) / (fetch first - seq) per s and the best s.
 *
 *   mpirun -np 2 mpi_ll7 N REPS OPS_CAP
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 0;
	int reps = argc > 2 ? atoi(argv[2]) : 0;
	long cap = argc > 3 ? atol(argv[3]) : 0;
	struct ll7_data d;
	if (size != 2 || n < 1 || n > 100000000 || reps < 1 || reps > 64 ||
	    cap < 1 || ll7_alloc(&d, n)) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np 2 mpi_ll7 N REPS "
					"OPS_CAP (or out of memory)\n");
		MPI_Finalize();
		return 2;
	}
	long sv[64];
	int ns = 0;
	for (int i = 0; ns < 63; i++) {
		long s = lround(pow(10.0, i / 2.0));
		if (s >= n)
			break;
		if ((n + s - 1) / s <= cap)
			sv[ns++] = s;
	}
	sv[ns++] = n;
	double *ybuf = malloc((size_t)n * sizeof(double));
	MPI_Request *rq = malloc((size_t)(n / sv[0] + 1) * sizeof(*rq));
	double want = 0;
	if (rank == 0) {
		ll7_kernel(&d, d.x, d.y, 0, n);
		want = ll7_checksum(d.x, n);
	}
	double *tseq = calloc((size_t)(ns * reps), sizeof(double));
	double *tff = calloc((size_t)(ns * reps), sizeof(double));
	double *tpf = calloc((size_t)(ns * reps), sizeof(double));
	int bad = 0;
	for (int si = 0; si < ns; si++) {
		long s = sv[si], nch = (n + s - 1) / s;
		for (int r = 0; r < reps; r++) {
			double *t = &tseq[si * reps + r];
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 0) {
				double t0 = MPI_Wtime();
				ll7_kernel(&d, d.x, d.y, 0, n);
				*t = (MPI_Wtime() - t0) * 1e9;
			}
			/* fetch first */
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 0) {
				memset(ybuf, 0xff, (size_t)n * sizeof(double));
				double t0 = MPI_Wtime();
				int go = 1;
				MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
				MPI_Recv(ybuf, (int)n, MPI_DOUBLE, 1, 2,
					 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				ll7_kernel(&d, d.x, ybuf, 0, n);
				tff[si * reps + r] = (MPI_Wtime() - t0) * 1e9;
				bad += ll7_checksum(d.x, n) != want;
			} else {
				int go;
				MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(d.y, (int)n, MPI_DOUBLE, 0, 2,
					 MPI_COMM_WORLD);
			}
			/* nonblocking prefetch of every chunk */
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 0) {
				memset(ybuf, 0xff, (size_t)n * sizeof(double));
				double t0 = MPI_Wtime();
				for (long c = 0; c < nch; c++) {
					long k0 = c * s,
					     k1 = k0 + s < n ? k0 + s : n;
					MPI_Irecv(ybuf + k0, (int)(k1 - k0),
						  MPI_DOUBLE, 1, 3,
						  MPI_COMM_WORLD, &rq[c]);
				}
				int go = 1;
				MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
				for (long c = 0; c < nch; c++) {
					long k0 = c * s,
					     k1 = k0 + s < n ? k0 + s : n;
					MPI_Wait(&rq[c], MPI_STATUS_IGNORE);
					ll7_kernel(&d, d.x, ybuf, k0, k1);
				}
				tpf[si * reps + r] = (MPI_Wtime() - t0) * 1e9;
				bad += ll7_checksum(d.x, n) != want;
			} else {
				int go;
				MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				for (long c = 0; c < nch; c++) {
					long k0 = c * s,
					     k1 = k0 + s < n ? k0 + s : n;
					MPI_Isend(d.y + k0, (int)(k1 - k0),
						  MPI_DOUBLE, 0, 3,
						  MPI_COMM_WORLD, &rq[c]);
				}
				MPI_Waitall((int)nch, rq, MPI_STATUSES_IGNORE);
			}
		}
	}
	if (rank == 0) {
		double seq = median(tseq, ns * reps),
		       ff = median(tff, ns * reps);
		int best = 0;
		double bestpct = INFINITY;
		for (int si = 0; si < ns; si++) {
			double th = median(tpf + si * reps, reps);
			double pct = (th - seq) / (ff - seq) * 100;
			printf("mpirow,%ld,%ld,%.0f,%.0f,%.0f,%.2f\n", n,
			       sv[si], seq, ff, th, pct);
			if (pct < bestpct) {
				bestpct = pct;
				best = si;
			}
		}
		printf("mpi ll7 n=%ld: seq %.0f ns, fetch-first %.0f ns, best "
		       "s=%ld: "
		       "prefetch %.0f ns, %.2f%%\n",
		       n, seq, ff, sv[best], median(tpf + best * reps, reps),
		       bestpct);
		if (bad)
			printf("mpi ll7: %d WRONG checksums\n", bad);
		else
			printf("mpi ll7: all runs verified against the "
			       "sequential checksum\n");
	}
	MPI_Finalize();
	return bad ? 1 : 0;
}
