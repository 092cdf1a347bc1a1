/* SPDX-License-Identifier: MIT */
/*
 * node.c - bringing a node up and down: choose CPUs, build the rings on
 * the node's NUMA node, start the SU and EU threads pinned to their CPUs,
 * wait for main's frame to end, print statistics, free everything.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "node/node.h"
#include "base/acct.h"
#include "base/settings.h"
#include "base/trace.h"
#include "gas/gmem.h"
#include "gas/registry.h"
#include "node/irq.h"
#include "dsm/pt.h"
#include "su/su.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Outside earth_node_g, which each earth_run clears: set while the node
 * runs. earth_sync_from_thread callers raise inbox_users, then check
 * node_running (both seq_cst); earth_run clears node_running, then waits
 * for inbox_users to reach zero before freeing the inbox (Dekker pair: a
 * caller either sees node_running cleared or is counted). */
static _Atomic bool node_running;
static _Atomic uint32_t inbox_users;

uint32_t earth_node_id(void)
{
	return earth_node_g.id;
}

uint32_t earth_num_nodes(void)
{
	return earth_node_g.num_nodes;
}

int earth_sync_from_thread(earth_gslot slot)
{
	struct earth_node *n = &earth_node_g;
	atomic_fetch_add_explicit(&inbox_users, 1, memory_order_seq_cst);
	int ret = 0;
	if (!atomic_load_explicit(&node_running, memory_order_seq_cst)) {
		ret = -ESRCH;
	} else if (!earth_gslot_addr(slot) || earth_gslot_node(slot) != n->id) {
		ret = -EINVAL;
	} else {
		struct q_msg *m = q_mpsc_reserve(&n->inbox);
		if (!m) {
			ret = -EAGAIN;
		} else {
			m->w[0] = (uint64_t)SU_OP_SYNC | (uint64_t)SU_REQ_GSLOT
							     << 16;
			m->w[1] = slot.bits;
			q_mpsc_publish(&n->inbox, m);
			/* Dekker with su_try_sleep: message stored, then
			 * look at the SU. */
			atomic_thread_fence(memory_order_seq_cst);
			earth_su_wake(n);
			if (n->opts.node_mode == EARTH_MODE_SINGLE_IRQ)
				irq_raise_local();
		}
	}
	/* Pairs with the acquire loads in node_quiesce_inbox. */
	atomic_fetch_sub_explicit(&inbox_users, 1, memory_order_release);
	return ret;
}

/* After running is cleared: wait until no thread is inside
 * earth_sync_from_thread, so the inbox can be freed. */
static void node_quiesce_inbox(void)
{
	atomic_store_explicit(&node_running, false, memory_order_seq_cst);
	while (atomic_load_explicit(&inbox_users, memory_order_acquire))
		sched_yield();
}

static bool node_others_signal(struct earth_node *n)
{
	return node_may_signal(n, &inbox_users);
}

/* The units' threads, known as the node's own (stuck.c). */
static void *su_thread_known(void *arg)
{
	node_tid_known();
	node_tids_started(); /* before the SU can look */
	return su_thread(arg);
}

static void *eu_thread_known(void *arg)
{
	node_tid_known();
	return eu_thread(arg);
}

static void *single_thread_known(void *arg)
{
	node_tid_known();
	node_tids_started();
	return eu_single_thread(arg);
}

/* The trace's name for a fiber: the threaded function it enters. */
static const char *node_tfunc_name(uintptr_t fn)
{
	const struct earth_tfunc *f;
	for (int32_t id = 0; (f = reg_tfunc_at(id)); id++)
		if ((uintptr_t)f->entry == fn)
			return f->name;
	return NULL;
}

/* The trace's names of messages and requests: shared memory's kinds
 * ride above the type (su/deliver.c, su/loop.c). */
static const char *node_msg_name(unsigned type)
{
	return (type & 0xff) == W_DSM && type >> 8 ? su_dsm_msg_name(type >> 8)
						   : wire_type_name(type);
}

static const char *node_op_name(unsigned op)
{
	return (op & 0xff) == SU_OP_DSM && op >> 8 ? dsm_req_name(op >> 8)
						   : su_op_name(op);
}

/* A single-core node needs one CPU: with several nodes on this host and
 * no EARTH_CPUS, node r takes the r-th allowed CPU (dual nodes take two
 * each); it shares only when there are more nodes than CPUs. */
static void node_single_cpu(struct earth_node *n)
{
	n->su_cpu = n->eu_cpu;
	if (n->opts.eu_cpu >= 0 || n->local_size <= 1) {
		n->oversubscribed = false;
		return;
	}
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
		return;
	int cpus[CPU_SETSIZE], m = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[m++] = c;
	if (m < 1)
		return;
	n->eu_cpu = n->su_cpu = cpus[n->local_rank % (uint32_t)m];
	n->oversubscribed = n->local_size > (uint32_t)m;
}

static void node_free(struct earth_node *n)
{
	for (unsigned i = 0; i < eu_states(n->eus); i++)
		eu_frames_release_all(eu_at(i));
	eu_frames_release_large();
	gmem_close();
	reg_mem_clear();
	if (su_g.out_head) {
		for (uint32_t p = 0; p < n->num_nodes; p++)
			for (struct su_out_msg *m = su_g.out_head[p], *nx; m;
			     m = nx) {
				nx = m->next;
				su_out_free(m);
			}
	}
	free(su_g.out_head);
	free(su_g.out_tail);
	free(su_g.owed);
	free(su_g.hungry);
	if (n->net)
		n->net->ops->fini(n->net);
	n->net = NULL;
	free(eu_first.ovf);
	free(eu_first.own_ready);
	/* EUs 1 to k - 1: their states stay, with their counters, for
	 * earth_stats_get after the run (freed when the next run starts, or
	 * at exit). */
	for (unsigned i = 1; i < eu_states(n->eus); i++) {
		free(eu_at(i)->ovf);
		free(eu_at(i)->own_ready);
		eu_at(i)->ovf = NULL;
		eu_at(i)->own_ready = NULL;
	}
	free(n->eu_cpus);
	n->eu_cpus = NULL;
	su_detach(&su_g);
	unit_links_fini(n);
	q_mpsc_fini(&n->inbox);
}

/* The process is registered for the asymmetric fence (once). */
static bool node_fence_ready(void)
{
	static int ready = -1; /* unknown; earth_run is not reentrant */
	if (ready < 0)
		ready = earth_fence_heavy_init();
	return ready;
}

/* Starts the SU and the EU threads and waits for them all; -1 if one
 * could not start (the others have ended). */
static int node_run_dual(struct earth_node *n, struct eu_start *st)
{
	unsigned k = n->eus ? n->eus : 1;
	pthread_t su_tid, eu_tid[k];
	struct eu_start eu_st[k];
	for (unsigned i = 0; i < k; i++) {
		eu_st[i] = *st;
		eu_st[i].index = i;
		if (i)
			eu_st[i].main_fn = NULL;
	}
	/* Several EUs: main's frame, made before any EU runs, so the one
	 * that ends it knows it (eu_state.main_frame). */
	if (k > 1 && n->id == 0) {
		void *frame = eu_frame_alloc(&eu_first, st->main_fn);
		if (st->size)
			memcpy(frame, st->args, st->size);
		for (unsigned i = 0; i < k; i++) {
			eu_st[i].main_frame = frame;
			eu_at(i)->main_frame = frame;
		}
	}
	if (pthread_create(&su_tid, NULL, su_thread_known, n) != 0) {
		fprintf(stderr, "earth: cannot start the SU thread\n");
		return -1;
	}
	/* The SU measures itself alone first (su/loop.c, su_core_probe):
	 * this thread sleeps meanwhile, and the EU does not exist yet. */
	if (n->su_probe)
		while (!atomic_load_explicit(&n->su_measured,
					     memory_order_acquire))
			earth_futex_wait(&n->su_measured, 0);
	for (unsigned i = 0; i < k; i++) {
		if (pthread_create(&eu_tid[i], NULL, eu_thread_known,
				   &eu_st[i]) == 0)
			continue;
		fprintf(stderr, "earth: cannot start EU thread %u of %u\n", i,
			k);
		/* The EUs started stop (they check stop); seq_cst store,
		 * then earth_su_wake's seq_cst load of the SU's state
		 * (Dekker with su_try_sleep). */
		atomic_store_explicit(&n->stop, true, memory_order_seq_cst);
		su_wake_eu(n);
		for (unsigned j = 0; j < i; j++)
			pthread_join(eu_tid[j], NULL);
		atomic_store_explicit(&n->shutdown, true, memory_order_seq_cst);
		earth_su_wake(n);
		pthread_join(su_tid, NULL);
		return -1;
	}
	for (unsigned i = 0; i < k; i++)
		pthread_join(eu_tid[i], NULL);
	pthread_join(su_tid, NULL);
	return 0;
}

/* A single-core node: one thread does the EU's and the SU's work. */
static int node_run_single(struct earth_node *n, struct eu_start *st)
{
	(void)n;
	pthread_t tid;
	if (pthread_create(&tid, NULL, single_thread_known, st) != 0) {
		fprintf(stderr, "earth: cannot start the node's thread\n");
		return -1;
	}
	pthread_join(tid, NULL);
	return 0;
}

/* earth_run's arguments: main's descriptor and its argument block agree;
 * no node runs in this process yet. */
static int node_check_call(const struct earth_tfunc *main_fn, const void *args,
			   size_t size)
{
	if (atomic_load_explicit(&node_running, memory_order_relaxed)) {
		fprintf(stderr,
			"earth: earth_run: a node is already running in "
			"this process\n");
		return -1;
	}
	if (!main_fn || !main_fn->entry) {
		fprintf(stderr, "earth: earth_run: null main function\n");
		return -1;
	}
	if (main_fn->args_size > main_fn->frame_size) {
		fprintf(
		    stderr,
		    "earth: earth_run: %s declares %u bytes of arguments but "
		    "a %u-byte frame\n",
		    main_fn->name, main_fn->args_size, main_fn->frame_size);
		return -1;
	}
	if (size != main_fn->args_size || (size && !args)) {
		fprintf(
		    stderr,
		    "earth: earth_run: %zu bytes of arguments for %s, which "
		    "takes %u\n",
		    size, main_fn->name, main_fn->args_size);
		return -1;
	}
	return 0;
}

/* A clean node and units with the hooks the lower layers call, the
 * options, and the node's place in the job. */
static int node_init(struct earth_node *n, const struct earth_options *opts)
{
	memset(n, 0, sizeof(*n));
	memset(&eu_first, 0, sizeof(eu_first));
	/* The last run's sibling states, kept for earth_stats_get until
	 * now: from here eu_rest is this run's (node_open_eus), n->eus
	 * of them, or none. */
	free(eu_rest);
	eu_rest = NULL;
	memset(&su_g, 0, sizeof(su_g));
	n->invoke_fiber = eu_invoke_trampoline;
	n->token_gone_fiber = eu_token_gone;
	n->may_signal = node_others_signal;
	n->stuck_report = node_stuck_report;
	node_tids_reset();
	node_tid_known(); /* waits in earth_run meanwhile */
	if (opts)
		n->opts = *opts;
	else
		earth_options_default(&n->opts);
	const char *jerr = earth_job_from_env(n);
	if (jerr) {
		fprintf(stderr, "earth: %s\n", jerr);
		return -1;
	}
	earth_fatal_set_node(n->id);
	n->su_wordp = &n->su_word;
	return 0;
}

/* A job of several nodes: the transport and the SU's per-peer queues. */
static int node_open_net(struct earth_node *n)
{
	if (n->num_nodes <= 1)
		return 0;
	const char *nerr = NULL;
	n->net = net_open(n->id, n->num_nodes, &nerr);
	su_g.out_head = calloc(n->num_nodes, sizeof(*su_g.out_head));
	su_g.out_tail = calloc(n->num_nodes, sizeof(*su_g.out_tail));
	su_g.owed = calloc(n->num_nodes, sizeof(*su_g.owed));
	su_g.owed_max = earth_setting_u64(EARTH_SET_PEER_QUEUE_MB) << 20;
	su_g.hungry = calloc(n->num_nodes, sizeof(*su_g.hungry));
	if (!n->net || !su_g.out_head || !su_g.out_tail || !su_g.owed ||
	    !su_g.hungry) {
		fprintf(stderr, "earth: node %u of %u: %s\n", n->id,
			n->num_nodes, nerr ? nerr : "out of memory");
		return -1;
	}
	n->su_wordp = n->net->ops->su_word(n->net);
	n->net->place = su_net_place;
	return 0;
}

/* The memory remote nodes may reach: static data, the global segment. */
static int node_open_memory(struct earth_node *n)
{
	reg_mem_add_static();
	const char *gerr = gmem_open(n->id, n->num_nodes, n->net);
	if (!gerr)
		gerr = gmem_expose(n->net);
	node_tids_transport();
	if (gerr) {
		fprintf(stderr, "earth: node %u: %s\n", n->id, gerr);
		return -1;
	}
	return 0;
}

/* Times in TSC ticks, and whether the node keeps time and counters. */
static int node_clocks(struct earth_node *n)
{
	n->tsc_per_ns = q_tsc_per_ns();
	n->spin_ticks = (uint64_t)(n->opts.spin_us * 1000.0 * n->tsc_per_ns);
	n->steal_ticks = (uint64_t)(EARTH_STEAL_AFTER_NS * n->tsc_per_ns);
	n->busy_yield_ticks = (uint64_t)(EARTH_BUSY_YIELD_NS * n->tsc_per_ns);
	n->timing = n->opts.print_stats || earth_setting_on(EARTH_SET_TIMING);
	if (acct_open(n) != 0)
		return -1;
	n->timing |= acct_on;
	return 0;
}

/* A single-core node's CPU, and how long a unit spins before it yields
 * to a partner on the same CPU (who cannot answer until it does). */
static void node_place(struct earth_node *n, bool single)
{
	if (single)
		node_single_cpu(n);
	n->yield_ticks = n->eu_cpu == n->su_cpu
			     ? 0
			     : (uint64_t)(EARTH_YIELD_AFTER_NS * n->tsc_per_ns);
}

/* The states of EUs 1 to k - 1 (EU 0's is eu_first), each with its link
 * and the token deque in it (siblings and the SU steal from it). */
static int node_open_eus(struct earth_node *n)
{
	unsigned k = n->eus ? n->eus : 1;
	if (k == 1)
		return 0;
	eu_rest = aligned_alloc(Q_CACHE_LINE, (k - 1) * sizeof(*eu_rest));
	if (!eu_rest)
		goto oom;
	memset(eu_rest, 0, (k - 1) * sizeof(*eu_rest));
	for (unsigned i = 1; i < k; i++) {
		struct eu_state *eu = eu_at(i);
		eu->owner_tag = i << FRAME_OWNER_SHIFT;
		eu->link = &n->link[i];
		eu->req = &n->link[i].req;
		eu->ready = &n->link[i].ready;
		eu->tokens = &n->link[i].tokens;
		eu->siblings = true;
	}
	return 0;
oom:
	fprintf(stderr,
		"earth: node %u: out of memory for the state of %u Execution "
		"Units: give fewer (EARTH_EUS)\n",
		n->id, k);
	return -1;
}

/* Each EU's ring pair with the SU, the inbox and the token deque, on the node's
 * NUMA node, handed to the units. */
static int node_open_queues(struct earth_node *n, bool single)
{
	enum q_mode mode =
	    n->opts.queue_mode == EARTH_QUEUE_HWQ ? Q_MODE_HWQ : Q_MODE_SW;
	uint32_t slots = n->opts.queue_slots ? n->opts.queue_slots
					     : EARTH_QUEUE_SLOTS_DEFAULT;
	/* Thieves on other threads: the SU for peers, or sibling EUs; the
	 * owner-only pop stays for one EU on one node (deque.h). */
	if (unit_links_init(n, mode, slots) || su_attach(&su_g, n) ||
	    q_mpsc_init(&n->inbox, EARTH_INBOX_SLOTS) ||
	    unit_tokens_init(n, EARTH_TOKEN_DEQUE_MAX,
			     !single && (n->num_nodes > 1 || n->eus > 1))) {
		fprintf(stderr,
			"earth: cannot create the EU/SU queues (%u slots "
			"of 64 bytes) or the token deque: out of memory or "
			"bad size\n",
			slots);
		return -1;
	}
	eu_first.link = &n->link[0];
	eu_first.req = &n->link[0].req;
	eu_first.ready = &n->link[0].ready;
	eu_first.tokens = &n->link[0].tokens;
	eu_first.siblings = n->eus > 1;
	return node_open_eus(n);
}

/* How the units share the work in this run. */
static void node_unit_policy(struct earth_node *n, bool single)
{
	/* The EU signals slots of this node itself (eu/post.c) on a dual
	 * node, observed or not: a single-core node's SU work runs between
	 * fibers anyway, and EARTH_EU_SIGNALS=0 sends them all to the SU
	 * (docs/architecture.md, "Signals on the EU"). */
	eu_first.local_sig = !single && earth_setting_on(EARTH_SET_EU_SIGNALS);
	for (unsigned i = 1; i < n->eus; i++)
		eu_at(i)->local_sig = eu_first.local_sig;
	/* An idle SU sleeps while the EU computes (su/loop.c, su_try_sleep): on
	 * one dual node, where the EU is the only one that gives it work
	 * without waking it (peers' transports poll and wake on their own
	 * terms), and where the kernel has the asymmetric fence that keeps
	 * the EU's side a plain load (base/fence.c). */
	n->su_doze = !single && !n->net &&
		     earth_setting_on(EARTH_SET_SU_DOZE) && node_fence_ready();
	/* EUs of one node sleep with the asymmetric fence against a sibling
	 * pushing a token (eu/steal.c); without it they sleep
	 * EU_SIB_RECHECK_NS at a time. */
	if (n->eus > 1)
		(void)node_fence_ready();
	/* ... and sooner on a core it shares with the EU (su_spin_ticks). */
	n->shared_spin_ticks =
	    (uint64_t)((double)earth_setting_u64(EARTH_SET_SHARED_SPIN_US) *
		       1000.0 * n->tsc_per_ns);
	n->su_probe = n->su_doze && n->shared_spin_ticks < n->spin_ticks;
	n->probe_every_ticks =
	    (uint64_t)(EARTH_SHARED_PROBE_NS * n->tsc_per_ns);
}

/* After the units' threads ended: the statistics and trace written, the
 * node's exit status, everything freed. */
static int node_finish(struct earth_node *n)
{
	n->end_tsc = q_tsc();
	node_quiesce_inbox();
	if (n->opts.print_stats)
		fflush(stdout); /* the program's output before the tables */
	int out_bad = acct_close(n);
	out_bad |= trace_close();
	int status = n->id == 0 ? n->exit_status : n->stop_status;
	/* A statistics or trace file not written (the node said why): a
	 * failure, and earthrun's sign that this node's part is missing.
	 * Node 0 keeps a non-zero status of the program's. */
	if (out_bad && (status == 0 || n->id != 0))
		status = EARTH_EXIT_OUTPUT;
	node_free(n);
	return status;
}

/* Brings the node up step by step (each step says why it failed), runs
 * the units' threads until the job ends, and brings it down. */
int earth_run(const struct earth_options *opts,
	      const struct earth_tfunc *main_fn, const void *args, size_t size)
{
	struct earth_node *n = &earth_node_g;
	if (node_check_call(main_fn, args, size) != 0)
		return EARTH_EXIT_USAGE;
	/* Every setting but those of struct earth_options, validated
	 * before anything starts (base/settings.h); then, under a PMIx
	 * launcher, the same layout as the other nodes (aslr.c: it may
	 * execute the program again, and reads EARTH_ASLR). */
	if (earth_settings_load() != 0)
		return EARTH_EXIT_USAGE;
	node_same_layout();
	if (node_init(n, opts) != 0 || earth_eus_choose(n) != 0)
		return EARTH_EXIT_USAGE;
	if (node_open_net(n) != 0 || node_open_memory(n) != 0 ||
	    (node_dsm_wanted && node_dsm_open(n) != 0) || node_clocks(n) != 0) {
		node_free(n);
		return EARTH_EXIT_USAGE;
	}
	if (earth_topology_choose(n) != 0)
		return EARTH_EXIT_USAGE;
	bool single = n->opts.node_mode != EARTH_MODE_DUAL;
	node_place(n, single);
	if (node_open_queues(n, single) != 0) {
		node_free(n);
		return EARTH_EXIT_USAGE;
	}
	static const struct trace_names names = {node_tfunc_name, node_msg_name,
						 node_op_name};
	if (trace_open(n->id, n->num_nodes, n->eus, n->tsc_per_ns, &names) !=
	    0) {
		node_free(n);
		return EARTH_EXIT_USAGE;
	}
	node_unit_policy(n, single);
	struct eu_start st = {n, main_fn, args, size, 0, NULL};
	n->start_tsc = q_tsc();
	atomic_store_explicit(&node_running, true, memory_order_release);
	if (single ? node_run_single(n, &st) : node_run_dual(n, &st)) {
		node_quiesce_inbox();
		node_free(n);
		return EARTH_EXIT_USAGE;
	}
	return node_finish(n);
}

int earth_main(int argc, char **argv, const struct earth_tfunc *main_fn)
{
	struct earth_options opts;
	earth_options_default(&opts);
	if (earth_options_parse(&opts, &argc, argv) != 0)
		return EARTH_EXIT_USAGE;
	struct earth_main_args a = {argc, argv};
	return earth_run(&opts, main_fn, &a, sizeof(a));
}
