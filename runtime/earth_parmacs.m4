dnl SPDX-License-Identifier: MIT
dnl
dnl earth_parmacs.m4 - the PARMACS macros (the convention of the SPLASH-2 and
dnl Splash-3 programs) over the EARTH page DSM, earth_dsm.h. Written for
dnl this project from the convention's macro names; it copies no other
dnl macro file. A program's Makefile runs
dnl
dnl     m4 $(earthcc --showme:parmacs) prog.c.in > prog.c
dnl     earthcc -O2 prog.c -o prog          (or CC=earthcc in its Makefile)
dnl     earthrun -n 4 ./prog -p8
dnl
dnl and nothing in the program changes (man 7 earth-parmacs).
dnl
dnl What the program's words become:
dnl
dnl MAIN_ENV      (file scope, in the file with main) includes earth_dsm.h
dnl               and the C headers such programs expect, defines the real
dnl               main, which runs the node with earth_dsm_main(), and
dnl               renames the program's main that follows to the function
dnl               node 0 runs as program thread 0 (#define main ...). Every
dnl               other node serves; the job's exit status is what the
dnl               program's main returns.
dnl               The renamed main is declared without a prototype, so
dnl               that every form of main fits: (void), (), (int, char **)
dnl               and the K&R one; -Wstrict-prototypes is kept quiet on
dnl               that line, -Wmissing-prototypes warns once on main.
dnl EXTERN_ENV    (file scope, every other file) the same headers.
dnl MAIN_INITENV  nothing: the shared region's size is the node's setting
dnl               EARTH_DSM_MB, not a number the program passes.
dnl MAIN_END      return 0 from main: the job ends cleanly on every node.
dnl               (exit() from a program thread would end node 0's process
dnl               under the other nodes; returning lets earth_dsm_main end
dnl               the job.) MAIN_END therefore belongs in main, as the
dnl               convention places it.
dnl CREATE(fn)    starts one program thread running fn() (spread over the
dnl               nodes: thread t on node t mod N). CREATE(fn, P), the
dnl               two-argument form, starts P-1 threads and then runs fn()
dnl               in main itself, as thread 0.
dnl WAIT_FOR_END(n)  waits until n of the threads created have ended; an n
dnl               larger than the number created (WAIT_FOR_END(P) after
dnl               CREATE(fn, P), which created P-1) waits for all of them.
dnl G_MALLOC(size)   shared memory: earth_dsm_alloc(size, FIRST_TOUCH, 0).
dnl               First touch, because it needs no knowledge of the
dnl               program's layout: in the convention's data-parallel
dnl               programs each thread initialises (first writes) the part
dnl               it owns, so that part is homed on the writer's node and
dnl               its releases send no diffs; a program whose main writes
dnl               everything gets every page homed on node 0, as TreadMarks
dnl               and JIAJIA's single home would. -DEARTH_PARMACS_PLACE=
dnl               EARTH_DSM_BLOCK (or CYCLIC) at compile time changes it.
dnl               G_MALLOC is an expression; NULL when the region is full.
dnl G_FREE(p)     earth_dsm_free(p).
dnl NU_MALLOC(size, t)  shared memory homed on the node of thread t
dnl               (t mod N): the convention's non-uniform allocation.
dnl LOCKDEC(l) LOCKINIT(l) LOCK(l) UNLOCK(l)   an earth_dsm_lock_t.
dnl ALOCKDEC(a, n) ALOCKINIT(a, n) ALOCK(a, i) AULOCK(a, i) AGETL(a, i)
dnl               an array of n locks; AGETL names the lock i itself.
dnl BARDEC(b) BARINIT(b) or BARINIT(b, n)  BARRIER(b, n)
dnl               an earth_dsm_barrier_t; both conventions of BARINIT (with
dnl               and without the count) are accepted: the count that
dnl               matters is BARRIER's, as earth_dsm_barrier() takes it.
dnl PAUSEDEC(f) PAUSEINIT(f) SETPAUSE(f) WAITPAUSE(f) CLEARPAUSE(f)
dnl               an earth_dsm_flag_t: set releases, wait acquires once
dnl               the flag is set (and leaves it set), clear resets it.
dnl GSDEC(g) GSINIT(g) GETSUB(g, sub, max, nprocs), and the NU_ forms
dnl               a self-scheduled loop counter: sub gets 0, 1, ... max
dnl               (each once, over all threads), then -1; the counter
dnl               starts over when nprocs threads have got their -1, so
dnl               the loop can run again. Under a lock of its own. g must live in G_MALLOC'd memory (as the
dnl               convention's programs keep it: in their global struct).
dnl CLOCK(t)      t = microseconds since the node started (wall clock).
dnl GET_PID(id)   id = this program thread's id (main: 0).
dnl SPLASH3_ROI_BEGIN SPLASH3_ROI_END   nothing (markers for simulators).
dnl NEWPROC ENV BAREXCLUDE BARINCLUDE AUG_ON AUG_OFF PROBEND
dnl               nothing; ADEC(x) AINIT(x) a long and nothing.
dnl
dnl Consistency and fences. The memory is release consistent: a thread
dnl sees another's writes after that thread released (UNLOCK, AULOCK,
dnl BARRIER, SETPAUSE, its end) and this one acquired (LOCK, ALOCK,
dnl BARRIER, WAITPAUSE, WAIT_FOR_END). A data-race-free program, the only
dnl kind the convention's null and POSIX variants promise anything for,
dnl sees sequential consistency. Those variants define no fence macro of
dnl their own: their synchronisation macros are calls the compiler cannot
dnl move memory accesses across. Here too: every macro above that
dnl synchronises is an out-of-line call into the runtime (a compiler
dnl barrier), and the call is also the DSM's release or acquire (diffs
dnl sent home and acknowledged before a release completes; noticed pages
dnl invalidated at an acquire). A racy access (a flag polled in a plain
dnl loop) is not made safe by a fence: it may read a stale page forever;
dnl use PAUSE or a lock.
dnl
dnl Known limits of the convention itself: m4 expands these names
dnl anywhere in the source, comments and strings included, and GNU m4's
dnl builtins (index, len, substr, format, eval, ...) when followed by "(".
divert(-1)

define(`EARTH_PARMACS_HEADERS', `
#include <earth_dsm.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#ifndef EARTH_PARMACS_PLACE
#define EARTH_PARMACS_PLACE EARTH_DSM_FIRST_TOUCH
#endif
struct earth_parmacs_gs {
	earth_dsm_lock_t lock;
	long next;
	long done;
};
extern unsigned earth_parmacs_created_;
')

define(`MAIN_ENV', `EARTH_PARMACS_HEADERS
unsigned earth_parmacs_created_;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
int earth_parmacs_main_();
#pragma GCC diagnostic pop
int main(int argc, char **argv)
{
	return earth_dsm_main(argc, argv,
			      (int (*)(int, char **))earth_parmacs_main_);
}
#define main earth_parmacs_main_
')
define(`EXTERN_ENV', `EARTH_PARMACS_HEADERS')
define(`MAIN_INITENV', `')
define(`MAIN_END', `{ return 0; }')

define(`CREATE', `ifelse(`$#', `2',
`{
	long earth_parmacs_i_;
	for (earth_parmacs_i_ = 1; earth_parmacs_i_ < (long)($2);
	     earth_parmacs_i_++) {
		EARTH_DSM_CREATE($1);
		earth_parmacs_created_++;
	}
	$1();
}',
`{
	EARTH_DSM_CREATE($1);
	earth_parmacs_created_++;
}')')
define(`WAIT_FOR_END', `{
	unsigned earth_parmacs_n_ = (unsigned)($1);
	if (earth_parmacs_n_ > earth_parmacs_created_)
		earth_parmacs_n_ = earth_parmacs_created_;
	earth_dsm_wait_for_end(earth_parmacs_n_);
}')

define(`G_MALLOC', `earth_dsm_alloc((size_t)($1), EARTH_PARMACS_PLACE, 0)')
define(`G_FREE', `earth_dsm_free($1)')
define(`NU_MALLOC', `earth_dsm_alloc((size_t)($1), EARTH_DSM_NODE,
	(unsigned)($2) % earth_dsm_nodes())')

define(`LOCKDEC', `earth_dsm_lock_t $1;')
define(`LOCKINIT', `{ ($1) = earth_dsm_lock_new(); }')
define(`LOCK', `{ earth_dsm_lock($1); }')
define(`UNLOCK', `{ earth_dsm_unlock($1); }')

define(`ALOCKDEC', `earth_dsm_lock_t $1[$2];')
define(`ALOCKINIT', `{
	long earth_parmacs_i_;
	for (earth_parmacs_i_ = 0; earth_parmacs_i_ < (long)($2);
	     earth_parmacs_i_++)
		($1)[earth_parmacs_i_] = earth_dsm_lock_new();
}')
define(`ALOCK', `{ earth_dsm_lock(($1)[$2]); }')
define(`AULOCK', `{ earth_dsm_unlock(($1)[$2]); }')
define(`AGETL', `(($1)[$2])')

define(`BARDEC', `earth_dsm_barrier_t $1;')
define(`BARINIT', `{ ($1) = earth_dsm_barrier_new(); }')
define(`BARRIER', `{ earth_dsm_barrier(($1), (unsigned)($2)); }')
define(`BAREXCLUDE', `{;}')
define(`BARINCLUDE', `{;}')

define(`PAUSEDEC', `earth_dsm_flag_t $1;')
define(`PAUSEINIT', `{ ($1) = earth_dsm_flag_new(); }')
define(`SETPAUSE', `{ earth_dsm_flag_set($1); }')
define(`WAITPAUSE', `{ earth_dsm_flag_wait($1); }')
define(`CLEARPAUSE', `{ earth_dsm_flag_clear($1); }')

define(`GSDEC', `struct earth_parmacs_gs $1;')
define(`GSINIT', `{
	($1).lock = earth_dsm_lock_new();
	($1).next = 0;
	($1).done = 0;
}')
define(`GETSUB', `{
	earth_dsm_lock(($1).lock);
	if (($1).next <= (long)($3)) {
		($2) = ($1).next++;
	} else {
		($2) = -1;
		if (++($1).done >= (long)($4)) {
			($1).next = 0;
			($1).done = 0;
		}
	}
	earth_dsm_unlock(($1).lock);
}')
define(`NU_GSDEC', `GSDEC($1)')
define(`NU_GSINIT', `GSINIT($1)')
define(`NU_GETSUB', `GETSUB($1, $2, $3, $4)')

define(`CLOCK', `{ ($1) = earth_dsm_clock_us(); }')
define(`GET_PID', `{ ($1) = earth_dsm_thread_id(); }')

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
