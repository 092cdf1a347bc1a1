dnl SPDX-License-Identifier: MIT
dnl benchmarks/parmacs/pthreads.m4 - the PARMACS macros on POSIX threads
dnl of one process: the floor the shared-memory nodes (runtime/
dnl earth_parmacs.m4) are measured against, with the same program sources
dnl (tests/parmacs) and the same meaning for every macro they use.
dnl
dnl   m4 benchmarks/parmacs/pthreads.m4 PROG.c.in > PROG.c
dnl   cc -pthread PROG.c -lm
dnl
dnl CREATE(fn) starts a thread running fn; CREATE(fn, P) starts P - 1 and
dnl runs fn in main as thread 0. WAIT_FOR_END(n) joins n of the threads
dnl created (all of them when n is larger). G_MALLOC and NU_MALLOC are
dnl malloc of page-aligned memory. Locks are mutexes; a barrier counts its
dnl arrivals under a mutex and wakes them on a condition variable (its
dnl count is BARRIER's, as in earth_parmacs.m4); a pause is a flag under
dnl a mutex and a condition variable. GET_PID gives the thread's number
dnl (main 0, then creation order); CLOCK the microseconds since the first
dnl CLOCK or MAIN_INITENV. Up to PARMACS_PTH_MAX threads.
divert(-1)

define(`PARMACS_PTH_HEADERS', `
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define PARMACS_PTH_MAX 1024
struct parmacs_pth_bar {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned long arrived, episode;
};
struct parmacs_pth_pause {
	pthread_mutex_t m;
	pthread_cond_t c;
	int set;
};
struct parmacs_pth_gs {
	pthread_mutex_t m;
	long next, done;
};
extern pthread_t parmacs_pth_tid_[PARMACS_PTH_MAX];
extern unsigned parmacs_pth_created_, parmacs_pth_joined_;
extern _Thread_local long parmacs_pth_id_;
extern long parmacs_pth_ids_;
extern struct timespec parmacs_pth_t0_;
void *parmacs_pth_run_(void *fn);
void parmacs_pth_barrier_(struct parmacs_pth_bar *b, unsigned long n);
')

define(`MAIN_ENV', `PARMACS_PTH_HEADERS
pthread_t parmacs_pth_tid_[PARMACS_PTH_MAX];
unsigned parmacs_pth_created_, parmacs_pth_joined_;
_Thread_local long parmacs_pth_id_;
long parmacs_pth_ids_;
struct timespec parmacs_pth_t0_;
void *parmacs_pth_run_(void *fn)
{
	parmacs_pth_id_ = __atomic_add_fetch(&parmacs_pth_ids_, 1,
					     __ATOMIC_SEQ_CST);
	((void (*)(void))fn)();
	return NULL;
}
void parmacs_pth_barrier_(struct parmacs_pth_bar *b, unsigned long n)
{
	pthread_mutex_lock(&b->m);
	unsigned long e = b->episode;
	if (++b->arrived >= n) {
		b->arrived = 0;
		b->episode++;
		pthread_cond_broadcast(&b->c);
	} else {
		while (b->episode == e)
			pthread_cond_wait(&b->c, &b->m);
	}
	pthread_mutex_unlock(&b->m);
}
')
define(`EXTERN_ENV', `PARMACS_PTH_HEADERS')
define(`MAIN_INITENV', `{ clock_gettime(CLOCK_MONOTONIC, &parmacs_pth_t0_); }')
define(`MAIN_END', `{ return 0; }')

define(`PARMACS_PTH_START', `{
	if (parmacs_pth_created_ >= PARMACS_PTH_MAX ||
	    pthread_create(&parmacs_pth_tid_[parmacs_pth_created_], NULL,
			   parmacs_pth_run_, (void *)($1))) {
		fprintf(stderr, "parmacs: cannot start a thread\n");
		exit(1);
	}
	parmacs_pth_created_++;
}')
define(`CREATE', `ifelse(`$#', `2',
`{
	long parmacs_pth_i_;
	for (parmacs_pth_i_ = 1; parmacs_pth_i_ < (long)($2); parmacs_pth_i_++)
		PARMACS_PTH_START($1)
	$1();
}',
`PARMACS_PTH_START($1)')')
define(`WAIT_FOR_END', `{
	unsigned long parmacs_pth_n_ = (unsigned long)($1);
	while (parmacs_pth_n_-- > 0 &&
	       parmacs_pth_joined_ < parmacs_pth_created_)
		pthread_join(parmacs_pth_tid_[parmacs_pth_joined_++], NULL);
}')

define(`PARMACS_PTH_ALLOC', `aligned_alloc(4096, ((size_t)($1) + 4095) / 4096 * 4096 + 4096)')
define(`G_MALLOC', `PARMACS_PTH_ALLOC($1)')
define(`G_FREE', `free($1)')
define(`NU_MALLOC', `PARMACS_PTH_ALLOC($1)')

define(`LOCKDEC', `pthread_mutex_t $1;')
define(`LOCKINIT', `{ pthread_mutex_init(&($1), NULL); }')
define(`LOCK', `{ pthread_mutex_lock(&($1)); }')
define(`UNLOCK', `{ pthread_mutex_unlock(&($1)); }')

define(`ALOCKDEC', `pthread_mutex_t $1[$2];')
define(`ALOCKINIT', `{
	long parmacs_pth_j_;
	for (parmacs_pth_j_ = 0; parmacs_pth_j_ < (long)($2); parmacs_pth_j_++)
		pthread_mutex_init(&($1)[parmacs_pth_j_], NULL);
}')
define(`ALOCK', `{ pthread_mutex_lock(&($1)[$2]); }')
define(`AULOCK', `{ pthread_mutex_unlock(&($1)[$2]); }')
define(`AGETL', `(($1)[$2])')

define(`BARDEC', `struct parmacs_pth_bar $1;')
define(`BARINIT', `{
	pthread_mutex_init(&($1).m, NULL);
	pthread_cond_init(&($1).c, NULL);
	($1).arrived = ($1).episode = 0;
}')
define(`BARRIER', `{ parmacs_pth_barrier_(&($1), (unsigned long)($2)); }')
define(`BAREXCLUDE', `{;}')
define(`BARINCLUDE', `{;}')

define(`PAUSEDEC', `struct parmacs_pth_pause $1;')
define(`PAUSEINIT', `{
	pthread_mutex_init(&($1).m, NULL);
	pthread_cond_init(&($1).c, NULL);
	($1).set = 0;
}')
define(`SETPAUSE', `{
	pthread_mutex_lock(&($1).m);
	($1).set = 1;
	pthread_cond_broadcast(&($1).c);
	pthread_mutex_unlock(&($1).m);
}')
define(`WAITPAUSE', `{
	pthread_mutex_lock(&($1).m);
	while (!($1).set)
		pthread_cond_wait(&($1).c, &($1).m);
	pthread_mutex_unlock(&($1).m);
}')
define(`CLEARPAUSE', `{
	pthread_mutex_lock(&($1).m);
	($1).set = 0;
	pthread_mutex_unlock(&($1).m);
}')

define(`GSDEC', `struct parmacs_pth_gs $1;')
define(`GSINIT', `{
	pthread_mutex_init(&($1).m, NULL);
	($1).next = 0;
	($1).done = 0;
}')
define(`GETSUB', `{
	pthread_mutex_lock(&($1).m);
	if (($1).next <= (long)($3)) {
		($2) = ($1).next++;
	} else {
		($2) = -1;
		if (++($1).done >= (long)($4)) {
			($1).next = 0;
			($1).done = 0;
		}
	}
	pthread_mutex_unlock(&($1).m);
}')
define(`NU_GSDEC', `GSDEC($1)')
define(`NU_GSINIT', `GSINIT($1)')
define(`NU_GETSUB', `GETSUB($1, $2, $3, $4)')

define(`CLOCK', `{
	struct timespec parmacs_pth_ts_;
	clock_gettime(CLOCK_MONOTONIC, &parmacs_pth_ts_);
	($1) = (parmacs_pth_ts_.tv_sec - parmacs_pth_t0_.tv_sec) * 1000000L +
	       (parmacs_pth_ts_.tv_nsec - parmacs_pth_t0_.tv_nsec) / 1000;
}')
define(`GET_PID', `{ ($1) = parmacs_pth_id_; }')

define(`SPLASH3_ROI_BEGIN', `{;}')
define(`SPLASH3_ROI_END', `{;}')
define(`NEWPROC', `')
define(`ENV', `')
define(`AUG_ON', `')
define(`AUG_OFF', `')
define(`PROBEND', `{;}')
define(`ADEC', `long $1;')
define(`AINIT', `{;}')

divert(0)dnl
