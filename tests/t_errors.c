/* SPDX-License-Identifier: MIT */
/*
 * t_errors.c - misuse is reported, never a crash: each bad call (null or
 * never-initialised slot, zero count, negative reset, null fiber or
 * function, wrong argument size, unknown node, null global pointer, a
 * one-shot slot signalled twice, END_FUNCTION twice, a split-phase call
 * outside a fiber) runs in a forked child whose stderr is captured; the
 * child must exit with EARTH_EXIT_USAGE and its message must name the
 * operation and say what was wrong. Bad options make earth_options_parse
 * return -EINVAL with a message, and an EARTH_CPUS CPU outside the
 * affinity set makes earth_run return EARTH_EXIT_USAGE.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "helpers.h"

TestSuite(errors, .timeout = 60);

/* ---- the misuse scenarios, run by one main function ---- */

enum misuse {
	M_SYNC_NULL,
	M_RSYNC_NULL,
	M_RSYNC_NODE3,
	M_INIT_NULL_SLOT,
	M_INIT_COUNT0,
	M_INIT_COUNT_NEG,
	M_INIT_RESET_NEG,
	M_INIT_NULL_FIBER,
	M_SPAWN_NULL,
	M_INVOKE_NULL_FN,
	M_INVOKE_ARGS_SIZE,
	M_INVOKE_NULL_ARGS,
	M_INVOKE_NODE5,
	M_TOKEN_NULL_FN,
	M_TOKEN_ARGS_SIZE,
	M_GET_NULL_SRC,
	M_GET_RSYNC_NULL_SRC,
	M_GET_NULL_DST,
	M_GET_NODE5,
	M_DATA_NULL_DST,
	M_BLKMOV_NULL_DST,
	M_BLKMOV_NULL_SLOT,
	M_INCR_ZERO,
	M_ONE_SHOT_TWICE,
	M_NEVER_INIT,
	M_NEVER_INIT_RSYNC,
	M_MISALIGNED,
	M_END_TWICE,
	M_END_TWICE_LARGE,
	M_END_NULL,
	M_INCR_OVERFLOW,
	M_ARGS_OVER_FRAME,
	M_RSYNC_UNREGISTERED,
	M_INCR_RSYNC_MISALIGNED,
	M_DATA_RSYNC_UNREGISTERED,
};

static enum misuse g_case;
static earth_slot g_end, g_zeroed, g_once;

struct m_frame {
	earth_slot s;
	long v;
	int arg8[2];
};
struct big_frame {
	unsigned char body[20000];
};

static void end_ok(void *frame)
{
	EARTH_END_FUNCTION(frame);
}

static void nothing(void *frame)
{
	(void)frame;
}

static void child_entry(void *f);
EARTH_THREADED_FUNCTION(child_fn, child_entry, struct m_frame, 8);

static void child_entry(void *frame)
{
	(void)frame;
	earth_sync(&g_end);
	EARTH_END_FUNCTION(frame);
}

/* Ends its own frame twice, then lets main end normally. */
static void twice_entry(void *frame)
{
	earth_end_function(frame);
	earth_end_function(frame);
	earth_sync(&g_end);
}
EARTH_THREADED_FUNCTION(twice_fn, twice_entry, struct m_frame, 0);
EARTH_THREADED_FUNCTION(twice_large_fn, twice_entry, struct big_frame, 0);

/* A definition whose argument block is larger than its frame (what
 * EARTH_THREADED_FUNCTION would give for a wrong args_bytes). */
static const struct earth_tfunc args_over_frame = {"args_over_frame",
						   child_entry, 16, 64};

static void misuse_entry(void *frame)
{
	struct m_frame *f = frame;
	earth_slot *s = &f->s;
	char args[64] = {0};
	/* If the runtime lets the misuse through, main ends with status 0. */
	earth_slot_init(&g_end, 1, 0, end_ok, f);
	earth_slot_init(s, 1, 0, nothing, f);
	switch (g_case) {
	case M_SYNC_NULL:
		earth_sync(NULL);
		break;
	case M_RSYNC_NULL:
		earth_rsync((earth_gslot){0});
		break;
	case M_RSYNC_NODE3:
		earth_rsync((earth_gslot){earth_gptr_make(3, s).bits});
		break;
	case M_INIT_NULL_SLOT:
		earth_slot_init(NULL, 1, 0, nothing, f);
		break;
	case M_INIT_COUNT0:
		earth_slot_init(s, 0, 0, nothing, f);
		break;
	case M_INIT_COUNT_NEG:
		earth_slot_init(s, -3, 0, nothing, f);
		break;
	case M_INIT_RESET_NEG:
		earth_slot_init(s, 1, -1, nothing, f);
		break;
	case M_INIT_NULL_FIBER:
		earth_slot_init(s, 1, 0, NULL, f);
		break;
	case M_SPAWN_NULL:
		earth_spawn(NULL, f);
		break;
	case M_INVOKE_NULL_FN:
		earth_invoke(0, NULL, args, 8);
		break;
	case M_INVOKE_ARGS_SIZE:
		earth_invoke(0, &child_fn, args, 4);
		break;
	case M_INVOKE_NULL_ARGS:
		earth_invoke(0, &child_fn, NULL, 8);
		break;
	case M_INVOKE_NODE5:
		earth_invoke(5, &child_fn, args, 8);
		break;
	case M_TOKEN_NULL_FN:
		earth_token(NULL, args, 8);
		break;
	case M_TOKEN_ARGS_SIZE:
		earth_token(&child_fn, args, 16);
		break;
	case M_GET_NULL_SRC:
		earth_get_sync_i(EARTH_GPTR_NULL, &f->arg8[0], s);
		break;
	case M_GET_RSYNC_NULL_SRC:
		earth_get_rsync_l(EARTH_GPTR_NULL, &f->v, earth_slot_global(s));
		break;
	case M_GET_NULL_DST:
		earth_get_sync_l(earth_to_global(&f->v), NULL, s);
		break;
	case M_GET_NODE5:
		earth_get_sync_l(earth_gptr_make(5, &f->v), &f->v, s);
		break;
	case M_DATA_NULL_DST:
		earth_data_sync_d(1.0, EARTH_GPTR_NULL, s);
		break;
	case M_BLKMOV_NULL_DST:
		earth_blkmov_sync(earth_to_global(args), EARTH_GPTR_NULL, 8, s);
		break;
	case M_BLKMOV_NULL_SLOT:
		earth_blkmov_sync(earth_to_global(args), earth_to_global(&f->v),
				  8, NULL);
		break;
	case M_INCR_ZERO:
		earth_incr_sync(s, 0);
		break;
	case M_ONE_SHOT_TWICE:
		earth_slot_init(&g_once, 1, 0, nothing, f);
		earth_sync(&g_once);
		earth_sync(&g_once);
		break;
	case M_NEVER_INIT:
		earth_sync(&g_zeroed);
		break;
	case M_NEVER_INIT_RSYNC:
		earth_rsync(earth_slot_global(&g_zeroed));
		break;
	case M_MISALIGNED:
		earth_sync((earth_slot *)(void *)((char *)s + 4));
		break;
	case M_END_TWICE:
		earth_invoke(0, &twice_fn, NULL, 0);
		return; /* the child signals g_end */
	case M_END_TWICE_LARGE:
		earth_invoke(0, &twice_large_fn, NULL, 0);
		return;
	case M_END_NULL:
		earth_end_function(NULL);
		break;
	case M_INCR_OVERFLOW:
		earth_slot_init(s, INT32_MAX - 1, 0, nothing, f);
		earth_incr_sync(s, 5);
		earth_sync(s);
		break;
	case M_ARGS_OVER_FRAME:
		earth_invoke(0, &args_over_frame, args, 64);
		return; /* child_entry signals g_end */
	case M_RSYNC_UNREGISTERED:
	case M_DATA_RSYNC_UNREGISTERED: {
		/* A slot in memory nobody registered (mmap: no leak report
		 * when the node stops). */
		earth_slot *h = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h == MAP_FAILED)
			break;
		earth_slot_init(h, 1, 0, nothing, f);
		if (g_case == M_RSYNC_UNREGISTERED)
			earth_rsync(earth_slot_global(h));
		else
			earth_data_rsync_l(1, earth_to_global(&f->v),
					   earth_slot_global(h));
		break;
	}
	case M_INCR_RSYNC_MISALIGNED:
		earth_incr_rsync(
		    (earth_gslot){earth_to_global((char *)s + 4).bits}, 1);
		break;
	}
	/* Requests are handled in order: an error the SU detects comes
	 * before this. */
	earth_sync(&g_end);
}
EARTH_THREADED_FUNCTION(misuse_main, misuse_entry, struct m_frame, 0);

static int run_misuse(void *arg)
{
	g_case = (enum misuse)(intptr_t)arg;
	return t_run(NULL, &misuse_main);
}

/* Checks that fn(arg) in a child stopped with EARTH_EXIT_USAGE and a
 * message with the operation and the phrase in it. */
static void expect_usage(int (*fn)(void *arg), void *arg, const char *op,
			 const char *phrase)
{
	t_expect_exit(fn, arg, EARTH_EXIT_USAGE, "earth: node 0: error: ", op,
		      phrase, NULL);
}

static void check_misuse(enum misuse m, const char *op, const char *phrase)
{
	expect_usage(run_misuse, (void *)(intptr_t)m, op, phrase);
}

/* The fiber is named from the program's symbol table: misuse_entry is
 * static and this program is not linked with -rdynamic. */
Test(errors, misuse_names_static_fiber)
{
	expect_usage(run_misuse, (void *)(intptr_t)M_INIT_COUNT0,
		     "INIT_SYNC: ", "(in fiber misuse_entry)");
}

Test(errors, sync_null_slot)
{
	check_misuse(M_SYNC_NULL, "SYNC: ", "null slot");
}

Test(errors, rsync_null_global_slot)
{
	check_misuse(M_RSYNC_NULL, "RSYNC: ", "null global slot pointer");
}

Test(errors, rsync_slot_on_node_3)
{
	check_misuse(M_RSYNC_NODE3, "RSYNC: ", "node 3");
}

Test(errors, init_sync_null_slot)
{
	check_misuse(M_INIT_NULL_SLOT, "INIT_SYNC: ", "null slot");
}

Test(errors, init_sync_count_0)
{
	check_misuse(M_INIT_COUNT0, "INIT_SYNC: ", "count 0");
}

Test(errors, init_sync_negative_count)
{
	check_misuse(M_INIT_COUNT_NEG, "INIT_SYNC: ", "count -3");
}

Test(errors, init_sync_negative_reset)
{
	check_misuse(M_INIT_RESET_NEG, "INIT_SYNC: ", "reset -1");
}

Test(errors, init_sync_null_fiber)
{
	check_misuse(M_INIT_NULL_FIBER, "INIT_SYNC: ", "null fiber");
}

Test(errors, spawn_null_fiber)
{
	check_misuse(M_SPAWN_NULL, "SPAWN: ", "null fiber");
}

Test(errors, invoke_null_function)
{
	check_misuse(M_INVOKE_NULL_FN, "INVOKE: ", "null threaded function");
}

Test(errors, invoke_wrong_args_size)
{
	check_misuse(M_INVOKE_ARGS_SIZE, "INVOKE: ",
		     "4 bytes of arguments for child_fn, which takes 8");
}

Test(errors, invoke_null_args)
{
	check_misuse(M_INVOKE_NULL_ARGS, "INVOKE: ", "null argument block");
}

Test(errors, invoke_node_5_of_1)
{
	check_misuse(M_INVOKE_NODE5, "INVOKE: ", "node 5");
}

Test(errors, token_null_function)
{
	check_misuse(M_TOKEN_NULL_FN, "TOKEN: ", "null threaded function");
}

Test(errors, token_wrong_args_size)
{
	check_misuse(M_TOKEN_ARGS_SIZE, "TOKEN: ", "16 bytes of arguments");
}

Test(errors, get_sync_null_source)
{
	check_misuse(M_GET_NULL_SRC, "GET_SYNC", "null global pointer");
}

Test(errors, get_rsync_null_source)
{
	check_misuse(M_GET_RSYNC_NULL_SRC, "GET_RSYNC", "null global pointer");
}

Test(errors, get_sync_null_destination)
{
	check_misuse(M_GET_NULL_DST, "GET_SYNC", "null destination");
}

Test(errors, get_sync_source_on_node_5)
{
	check_misuse(M_GET_NODE5, "GET_SYNC", "node 5");
}

Test(errors, data_sync_null_destination)
{
	check_misuse(M_DATA_NULL_DST, "DATA_SYNC", "null global pointer");
}

Test(errors, blkmov_null_destination)
{
	check_misuse(M_BLKMOV_NULL_DST, "BLKMOV_SYNC: ", "null global pointer");
}

Test(errors, blkmov_null_slot)
{
	check_misuse(M_BLKMOV_NULL_SLOT, "BLKMOV_SYNC: ", "null slot");
}

Test(errors, incr_sync_zero)
{
	check_misuse(M_INCR_ZERO, "INCR_SYNC: ", "increment 0");
}

Test(errors, one_shot_slot_signalled_twice)
{
	check_misuse(M_ONE_SHOT_TWICE, "SYNC: ", "one-shot");
}

Test(errors, never_initialised_slot)
{
	check_misuse(M_NEVER_INIT, "SYNC: ", "never initialised");
}

Test(errors, never_initialised_slot_rsync)
{
	check_misuse(M_NEVER_INIT_RSYNC, "SYNC: ", "never initialised");
}

Test(errors, misaligned_slot)
{
	check_misuse(M_MISALIGNED, "SYNC: ", "misaligned");
}

Test(errors, end_function_twice)
{
	check_misuse(M_END_TWICE, "END_FUNCTION: ", "ended twice");
}

Test(errors, end_function_twice_large_frame)
{
	/* Frames over 8 KiB come from the heap. */
	check_misuse(M_END_TWICE_LARGE, "END_FUNCTION: ", "ended twice");
}

Test(errors, end_function_null)
{
	check_misuse(M_END_NULL, "END_FUNCTION: ", "null frame");
}

Test(errors, incr_sync_past_int32_max)
{
	/* INT32_MAX - 1 + 5 does not fit a slot's count. */
	check_misuse(M_INCR_OVERFLOW, "INCR_SYNC", "count");
}

Test(errors, args_larger_than_frame)
{
	check_misuse(M_ARGS_OVER_FRAME, "INVOKE: ", "args_over_frame");
}

/* A global slot pointer to this node is held to what another node's SU
 * checks: an aligned slot in registered memory (on one node too). */
Test(errors, rsync_to_a_slot_in_unregistered_memory)
{
	check_misuse(M_RSYNC_UNREGISTERED, "RSYNC: ",
		     "which is not an aligned slot in registered memory: make "
		     "global slot pointers with earth_slot_global (SLOT_ADR) "
		     "of a slot in a frame, in static data or in registered "
		     "memory");
}

Test(errors, incr_rsync_to_a_misaligned_slot)
{
	check_misuse(M_INCR_RSYNC_MISALIGNED, "INCR_SYNC: ",
		     "which is not an aligned slot in registered memory");
}

Test(errors, data_rsync_signalling_a_slot_in_unregistered_memory)
{
	check_misuse(M_DATA_RSYNC_UNREGISTERED, "DATA_RSYNC_l: ",
		     "which is not an aligned slot in registered memory");
}

/* ---- operations outside a fiber ---- */

enum outside { O_SYNC, O_SPAWN, O_INVOKE, O_SET_STATUS, O_END };

static int run_outside(void *arg)
{
	static earth_slot s;
	switch ((enum outside)(intptr_t)arg) {
	case O_SYNC:
		earth_sync(&s);
		break;
	case O_SPAWN:
		earth_spawn(nothing, NULL);
		break;
	case O_INVOKE:
		earth_invoke(0, &child_fn, &s, 8);
		break;
	case O_SET_STATUS:
		earth_set_exit_status(3);
		break;
	case O_END:
		earth_end_function(&s);
		break;
	}
	return 0;
}

static void check_outside(enum outside o, const char *op)
{
	expect_usage(run_outside, (void *)(intptr_t)o, op, "outside a fiber");
}

Test(errors, sync_outside_a_fiber)
{
	check_outside(O_SYNC, "SYNC: ");
}

Test(errors, spawn_outside_a_fiber)
{
	check_outside(O_SPAWN, "SPAWN: ");
}

Test(errors, invoke_outside_a_fiber)
{
	check_outside(O_INVOKE, "INVOKE: ");
}

Test(errors, set_exit_status_outside_a_fiber)
{
	check_outside(O_SET_STATUS, "earth_set_exit_status: ");
}

Test(errors, end_function_outside_a_fiber)
{
	check_outside(O_END, "END_FUNCTION: ");
}

/* ---- options ---- */

static const char *g_flag;

/* Returns -earth_options_parse(...) (EINVAL on error), or 100 + argc left
 * when parsing succeeded. */
static int run_parse(void *arg)
{
	(void)arg;
	char a0[] = "prog", a2[] = "keep";
	char a1[128];
	snprintf(a1, sizeof(a1), "%s", g_flag);
	char *argv[] = {a0, a1, a2, NULL};
	int argc = 3;
	struct earth_options o;
	earth_options_default(&o);
	int r = earth_options_parse(&o, &argc, argv);
	return r ? -r : 100 + argc;
}

static void check_bad_flag(const char *flag, const char *phrase)
{
	g_flag = flag;
	t_expect_exit(run_parse, NULL, EINVAL, flag, phrase, NULL);
}

Test(errors, option_queue_bogus)
{
	check_bad_flag("--earth-queue=bogus", "unknown queue mode 'bogus'");
}

Test(errors, option_queue_slots_not_power_of_two)
{
	check_bad_flag("--earth-queue-slots=12", "power of two");
}

Test(errors, option_queue_slots_too_small)
{
	check_bad_flag("--earth-queue-slots=4", "power of two >= 8");
}

Test(errors, option_cpus_one_cpu)
{
	check_bad_flag("--earth-cpus=0", "give two CPUs");
}

Test(errors, option_hwq_latency_not_a_number)
{
	check_bad_flag("--earth-hwq-latency=-5", "not a whole number");
}

Test(errors, option_unknown)
{
	check_bad_flag("--earth-foo", "unknown option '--earth-foo'");
}

Test(errors, option_good_flag_is_removed)
{
	struct t_child c;
	g_flag = "--earth-queue-slots=64";
	cr_assert_eq(t_run_child(run_parse, NULL, &c), 0);
	cr_assert(c.exited);
	cr_assert_eq(c.status, 102, "stderr:\n%s", c.err);
	cr_assert_eq(c.err[0], 0, "stderr:\n%s", c.err);
}

static int run_parse_env(void *arg)
{
	(void)arg;
	setenv("EARTH_QUEUE", "bogus", 1);
	char a0[] = "prog";
	char *argv[] = {a0, NULL};
	int argc = 1;
	struct earth_options o;
	earth_options_default(&o);
	return -earth_options_parse(&o, &argc, argv);
}

Test(errors, option_bad_environment_fails_parse)
{
	t_expect_exit(run_parse_env, NULL, EINVAL, "EARTH_QUEUE",
		      "unknown queue mode 'bogus'", NULL);
}

/* ---- earth_run refusing to start ---- */

static int g_ran;
static void ran_entry(void *f);
EARTH_THREADED_FUNCTION(ran_main, ran_entry, struct m_frame, 0);

static void ran_entry(void *frame)
{
	g_ran = 1;
	EARTH_END_FUNCTION(frame);
}

static int run_bad_cpus(void *arg)
{
	(void)arg;
	cpu_set_t set;
	int good;
	if (sched_getaffinity(0, sizeof(set), &set) != 0 ||
	    t_first_cpu(&good) != 0)
		return 1;
	int bad = -1;
	for (int cpu = 0; cpu < 4096 && bad < 0; cpu++)
		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set))
			bad = cpu;
	char v[32];
	snprintf(v, sizeof(v), "%d,%d", good, bad);
	setenv("EARTH_CPUS", v, 1);
	struct earth_options o;
	earth_options_default(&o);
	int rc = earth_run(&o, &ran_main, NULL, 0);
	return g_ran ? 2 : rc;
}

Test(errors, earth_cpus_outside_affinity_set)
{
	t_expect_exit(run_bad_cpus, NULL, EARTH_EXIT_USAGE, "EARTH_CPUS",
		      "(SU) is not one this process may run on", NULL);
}

static int run_bad_slots(void *arg)
{
	(void)arg;
	struct earth_options o;
	earth_options_default(&o);
	o.queue_slots = 12;
	int rc = earth_run(&o, &ran_main, NULL, 0);
	return g_ran ? 2 : rc;
}

Test(errors, earth_run_bad_queue_slots)
{
	t_expect_exit(run_bad_slots, NULL, EARTH_EXIT_USAGE, "12 slots", NULL);
}

static int run_bad_main_args(void *arg)
{
	(void)arg;
	long x = 0;
	int rc = earth_run(NULL, &ran_main, &x, sizeof(x));
	if (g_ran)
		return 2;
	if (rc != EARTH_EXIT_USAGE)
		return 3;
	return earth_run(NULL, NULL, NULL, 0);
}

Test(errors, earth_run_bad_main_function_or_args)
{
	t_expect_exit(run_bad_main_args, NULL, EARTH_EXIT_USAGE,
		      "8 bytes of arguments for ran_main, which takes 0",
		      "null main function", NULL);
}

/* earth_run from a fiber: refused, and the running node goes on. */
static int g_nested_rc;
static void nested_entry(void *f);
EARTH_THREADED_FUNCTION(nested_main, nested_entry, struct m_frame, 0);

static void nested_entry(void *frame)
{
	g_nested_rc = earth_run(NULL, &ran_main, NULL, 0);
	int status = g_nested_rc == EARTH_EXIT_USAGE ? 5 : 4;
	earth_set_exit_status(g_ran ? 2 : status);
	EARTH_END_FUNCTION(frame);
}

static int run_nested(void *arg)
{
	(void)arg;
	return t_run(NULL, &nested_main);
}

Test(errors, earth_run_while_a_node_runs)
{
	t_expect_exit(run_nested, NULL, 5, "already running", NULL);
}

/* A main function whose argument block is larger than its frame. */
static const struct earth_tfunc main_args_over_frame = {"main_args_over_frame",
							ran_entry, 16, 64};

static int run_main_args_over_frame(void *arg)
{
	(void)arg;
	char args[64];
	memset(args, 0x5c, sizeof(args));
	int rc = earth_run(NULL, &main_args_over_frame, args, sizeof(args));
	return g_ran ? 2 : rc;
}

Test(errors, earth_run_main_args_larger_than_frame)
{
	t_expect_exit(run_main_args_over_frame, NULL, EARTH_EXIT_USAGE,
		      "main_args_over_frame", NULL);
}
