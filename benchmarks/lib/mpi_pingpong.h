/* SPDX-License-Identifier: MIT */
/*
 * mpi_pingpong.h - the 8-byte MPI_Send/MPI_Recv ping-pong between ranks 0
 * and 1 that the Open MPI comparisons time (compare/mpi_remote.c,
 * ucx_floor/mpi_floor.c): rank 0 sends i, rank 1 answers i + 1.
 */
#ifndef EARTH_BENCH_MPI_PINGPONG_H
#define EARTH_BENCH_MPI_PINGPONG_H

#include <mpi.h>

/* n round trips; returns the answers rank 0 found wrong (0 on rank 1). */
static inline long mpi_pingpong(int rank, long n)
{
	long v = 0, bad = 0;
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(&i, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&v, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			bad += v != i + 1;
		} else {
			MPI_Recv(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			v++;
			MPI_Send(&v, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
		}
	}
	return bad;
}

#endif /* EARTH_BENCH_MPI_PINGPONG_H */
