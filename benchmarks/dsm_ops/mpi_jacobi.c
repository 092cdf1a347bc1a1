/* SPDX-License-Identifier: MIT */
/*
 * mpi_jacobi.c - the 1-D Jacobi of jacobi.h in MPI, the message-passing
 * peer of dsm_ops's shared-memory Jacobi (driver.c runs both in one run):
 * two ranks, each a half of JAC_N doubles with one ghost cell per
 * neighbour, JAC_SWEEPS sweeps, each begun by an MPI_Sendrecv of the
 * boundary values with the other rank. Each element is computed with the
 * same operations as the pthreads and shared-memory versions, so the
 * checksum (rank 0 gathers rank 1's half) is equal bit for bit. Rank 0
 * times each repetition from a barrier to the end of its sweeps and
 * prints the median.
 *
 *   mpirun -np 2 mpi_jacobi REPS
 *       prints "mpi_jacobi: median N ns over REPS runs, checksum C"
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "jacobi.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* A half with a ghost cell at each end: local index k holds global
 * element lo + k - 1; the job's two ends (0 and JAC_N - 1) stay fixed, so
 * the ghosts beyond them are never read. */
static double xa[JAC_HALF + 2], ya[JAC_HALF + 2];

static double run(int rank, double *checksum)
{
	long lo = rank * JAC_HALF;
	int other = 1 - rank;
	for (long k = 0; k < JAC_HALF + 2; k++) {
		long i = lo + k - 1;
		xa[k] = ya[k] = i >= 0 && i < JAC_N ? jac_init(i) : 0.0;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	for (int s = 0; s < JAC_SWEEPS; s++) {
		double *src = s % 2 ? ya : xa, *dst = s % 2 ? xa : ya;
		/* my boundary value out, the neighbour's into my ghost */
		long mine = rank == 0 ? JAC_HALF : 1;
		long ghost = rank == 0 ? JAC_HALF + 1 : 0;
		MPI_Sendrecv(&src[mine], 1, MPI_DOUBLE, other, s, &src[ghost],
			     1, MPI_DOUBLE, other, s, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		jac_sweep(src + 1, dst + 1, JAC_HALF, src[0], src[JAC_HALF + 1],
			  rank == 0, rank == 1);
	}
	double ns = (MPI_Wtime() - t0) * 1e9;
	double *res = JAC_SWEEPS % 2 ? ya : xa;
	static double all[JAC_N];
	MPI_Gather(res + 1, (int)JAC_HALF, MPI_DOUBLE, all, (int)JAC_HALF,
		   MPI_DOUBLE, 0, MPI_COMM_WORLD);
	double sum = 0;
	if (rank == 0)
		for (long i = 0; i < JAC_N; i++)
			sum += all[i] * (double)(i % 7 + 1);
	*checksum = sum;
	return ns;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int reps = argc > 1 ? atoi(argv[1]) : 0;
	if (size != 2 || reps < 1 || reps > 64) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np 2 mpi_jacobi REPS "
					"(REPS 1 to 64)\n");
		MPI_Finalize();
		return 2;
	}
	double v[64], sum = 0;
	run(rank, &sum); /* first touches, not counted */
	for (int r = 0; r < reps; r++)
		v[r] = run(rank, &sum);
	if (rank == 0) {
		qsort(v, (size_t)reps, sizeof(*v), cmp);
		double med = reps % 2 ? v[reps / 2]
				      : (v[reps / 2 - 1] + v[reps / 2]) / 2;
		printf("mpi_jacobi: median %.0f ns over %d runs, checksum "
		       "%.17g\n",
		       med, reps, sum);
	}
	MPI_Finalize();
	return 0;
}
