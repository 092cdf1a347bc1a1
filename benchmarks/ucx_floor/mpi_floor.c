/* SPDX-License-Identifier: MIT */
/*
 * mpi_floor.c - the Open MPI floors beside the raw UCP ones (ucx_floor.sh),
 * on 2 ranks over one medium (the driver picks the btl: self,vader for
 * shm, self,tcp for tcp), each rank pinned to one CPU as a node's EU and
 * SU are (rank 0 on CPU0, rank 1 on CPU1):
 *
 *   mpi_pingpong_rtt.<m>  8-byte MPI_Send/MPI_Recv round trip (ns)
 *   mpi_get_lat.<m>       8-byte MPI_Get from rank 1's window, passive
 *                         target: MPI_Win_lock_all once, MPI_Win_flush
 *                         after each get (ns); rank 1 waits in MPI_Barrier
 *                         meanwhile, which progresses its side
 *
 * Each the median over REPS repetitions after one not recorded; every
 * pong and word fetched is checked (WRONG and exit 1 otherwise). Prints
 * the osc component chosen (MPI_T, when it tells) and the placement. The
 * Open MPI side of both ucx_floor.sh and compare.sh (compare.pingpong.mpi,
 * compare.get.mpi).
 *
 *   mpirun -np 2 ... mpi_floor MEDIUM ROUNDS REPS CPU0 CPU1
 */
#define _GNU_SOURCE 1
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#define WORDS 4096

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* n 8-byte MPI_Send/MPI_Recv round trips between ranks 0 and 1 (rank 0
 * sends i, rank 1 answers i + 1); returns the answers rank 0 found wrong
 * (0 on rank 1). */
static long mpi_pingpong(int rank, long n)
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

static long pattern(long i)
{
	return i * 2654435761l + 17;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long k = argc > 2 ? atol(argv[2]) : 0;
	int reps = argc > 3 ? atoi(argv[3]) : 0;
	int cpu = argc > 5 ? atoi(argv[4 + (rank & 1)]) : -1;
	if (size != 2 || argc != 6 || k < 1 || reps < 1 || reps > 64 ||
	    cpu < 0 || cpu >= CPU_SETSIZE) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np 2 mpi_floor MEDIUM "
					"ROUNDS REPS(1..64) CPU0 CPU1\n");
		MPI_Finalize();
		return 2;
	}
	const char *medium = argv[1];
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("mpi_floor: sched_setaffinity");
	double t_pp[64], t_get[64];
	long v = 0, bad = 0;
	for (int r = -1; r < reps; r++) {
		long n = r < 0 ? k / 10 + 1 : k;
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		bad += mpi_pingpong(rank, n);
		if (r >= 0)
			t_pp[r] = (MPI_Wtime() - t0) * 1e9 / (double)n;
	}
	/* MPI_Win_create on memory of our own, as the runtime's global heap:
	 * MPI_Win_allocate would let Open MPI pick osc sm, plain loads from
	 * a shared segment whatever the btl */
	static long base[WORDS];
	MPI_Win win;
	MPI_Win_create(base, sizeof(base), sizeof(long), MPI_INFO_NULL,
		       MPI_COMM_WORLD, &win);
	for (long i = 0; i < WORDS; i++)
		base[i] = pattern(i);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock_all(0, win);
	for (int r = -1; r < reps; r++) {
		long n = r < 0 ? k / 10 + 1 : k;
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			double t0 = MPI_Wtime();
			for (long i = 0; i < n; i++) {
				long w = (i * 7919) % WORDS;
				v = 0;
				MPI_Get(&v, 1, MPI_LONG, 1, w, 1, MPI_LONG,
					win);
				MPI_Win_flush(1, win);
				bad += v != pattern(w);
			}
			if (r >= 0)
				t_get[r] = (MPI_Wtime() - t0) * 1e9 / (double)n;
		}
	}
	MPI_Win_unlock_all(win);
	MPI_Barrier(MPI_COMM_WORLD);
	int cpus[2] = {sched_getcpu(), -1}, pinned[2] = {cpu, -1};
	MPI_Gather(&cpus[0], 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Gather(&pinned[0], 1, MPI_INT, pinned, 1, MPI_INT, 0,
		   MPI_COMM_WORLD);
	MPI_Win_free(&win);
	if (rank == 0) {
		qsort(t_pp, (size_t)reps, sizeof(double), cmp);
		qsort(t_get, (size_t)reps, sizeof(double), cmp);
		printf("# mpi_floor.%s: %ld rounds, reps %d; get: passive "
		       "target, MPI_Win_lock_all + MPI_Win_flush per get\n",
		       medium, k, reps);
		printf("# mpi_floor.%s: placement: rank 0 pinned to CPU %d "
		       "(on %d at the end), rank 1 pinned to CPU %d (on %d)\n",
		       medium, pinned[0], cpus[0], pinned[1], cpus[1]);
		if (bad)
			printf("mpi_floor.%s: %ld WRONG values\n", medium, bad);
		printf("METRIC mpi_pingpong_rtt.%s %.3f ns\n", medium,
		       t_pp[reps / 2]);
		printf("METRIC mpi_get_lat.%s %.3f ns\n", medium,
		       t_get[reps / 2]);
	}
	MPI_Finalize();
	return bad ? 1 : 0;
}
