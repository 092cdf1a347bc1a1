/* SPDX-License-Identifier: MIT */
/*
 * mpi_remote.c - the Open MPI side of the remote-access comparison in
 * compare.sh, on 2 ranks: an 8-byte ping-pong (MPI_Send/MPI_Recv) and an
 * 8-byte MPI_Get from rank 1's window under a passive-target lock, each
 * completed (MPI_Win_flush) before the next. Prints the median time per
 * round trip over REPS runs of K each, checking the values.
 *
 *   mpirun -np 2 mpi_remote K REPS
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/mpi_pingpong.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int k = argc > 1 ? atoi(argv[1]) : 0,
	    reps = argc > 2 ? atoi(argv[2]) : 0;
	if (size != 2 || k < 1 || reps < 1 || reps > 64) {
		if (!rank)
			fprintf(stderr,
				"usage: mpirun -np 2 mpi_remote K REPS\n");
		MPI_Finalize();
		return 2;
	}
	double t_pp[64], t_get[64];
	long word = 42, v = 0;
	int bad = 0;
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		bad += (int)mpi_pingpong(rank, k);
		t_pp[r] = (MPI_Wtime() - t0) * 1e9 / k;
	}
	MPI_Win win;
	MPI_Win_create(&word, sizeof(word), sizeof(word), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &win);
	for (int r = 0; r < reps; r++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
			double t0 = MPI_Wtime();
			for (long i = 0; i < k; i++) {
				v = 0;
				MPI_Get(&v, 1, MPI_LONG, 1, 0, 1, MPI_LONG,
					win);
				MPI_Win_flush(1, win);
				bad += v != 42;
			}
			t_get[r] = (MPI_Wtime() - t0) * 1e9 / k;
			MPI_Win_unlock(1, win);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Win_free(&win);
	if (rank == 0) {
		qsort(t_pp, (size_t)reps, sizeof(double), cmp);
		qsort(t_get, (size_t)reps, sizeof(double), cmp);
		if (bad)
			printf("mpi remote: %d WRONG values\n", bad);
		printf("mpi pingpong rtt median %.0f ns\n", t_pp[reps / 2]);
		printf("mpi get rtt median %.0f ns\n", t_get[reps / 2]);
	}
	MPI_Finalize();
	return bad ? 1 : 0;
}
