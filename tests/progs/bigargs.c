/* SPDX-License-Identifier: MIT */
/*
 * bigargs.c - threaded functions whose argument blocks are larger than a
 * message between nodes carries (a quarter of a ring over shm: 16 KiB
 * with --ring-kb 64; 64 KiB at most), for tests/t_balance.c:
 *
 *   bigargs invoke BYTES   main INVOKEs a function of BYTES bytes of
 *                          arguments (8, 20000 or 70000) on the last node,
 *                          which checks them: "bigargs: invoke ok"; where
 *                          no message carries them, the INVOKE is refused
 *   bigargs token BYTES    main posts 200 TOKENs of BYTES bytes of
 *                          arguments; each checks them, computes a while
 *                          and signals main: "bigargs: token ok, node 0
 *                          ran N of 200" (tokens a message cannot carry
 *                          are never given to another node)
 */
#include <earth.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOKENS = 200, MOST = 70000 };

/* Node-local: the tokens this node ran. */
static long ran_here;

#define BIG_FN(name, bytes)                                                    \
	struct name##_args {                                                   \
		earth_gslot done;                                              \
		unsigned char b[bytes];                                        \
	};                                                                     \
	struct name##_frame {                                                  \
		struct name##_args a;                                          \
	};                                                                     \
	static void name##_entry(void *f)                                      \
	{                                                                      \
		struct name##_frame *fr = f;                                   \
		run_one(fr->a.b, bytes, fr->a.done);                           \
		EARTH_END_FUNCTION(fr);                                        \
	}                                                                      \
	EARTH_THREADED_FUNCTION(name, name##_entry, struct name##_frame,       \
				sizeof(struct name##_args))

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

/* A function's body: its arguments checked, some work (so that an idle
 * node asks for tokens meanwhile), the done slot signalled. */
static void run_one(const unsigned char *b, size_t n, earth_gslot done)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pattern(i)) {
			printf("bigargs: node %u: byte %zu of %zu is %u, not "
			       "%u\n",
			       earth_node_id(), i, n, b[i], pattern(i));
			exit(1);
		}
	volatile double x = 0;
	for (int i = 0; i < 100000; i++)
		x += i;
	__atomic_add_fetch(&ran_here, 1, __ATOMIC_RELAXED);
	earth_rsync(done);
}

BIG_FN(fn8, 8);
BIG_FN(fn20000, 20000);
BIG_FN(fn70000, 70000);

struct main_frame {
	struct earth_main_args a;
	earth_slot s;
	int tokens;
	unsigned char args[sizeof(earth_gslot) + MOST];
};
static void main_entry(void *f);
static void main_done(void *f);
EARTH_THREADED_FUNCTION(bigargs_main, main_entry, struct main_frame,
			sizeof(struct earth_main_args));

static void main_entry(void *frame)
{
	struct main_frame *m = frame;
	char **argv = m->a.argv;
	long bytes = m->a.argc == 3 ? atol(argv[2]) : 0;
	const struct earth_tfunc *f = bytes == 8       ? &fn8
				      : bytes == 20000 ? &fn20000
				      : bytes == 70000 ? &fn70000
						       : NULL;
	m->tokens = m->a.argc == 3 && !strcmp(argv[1], "token");
	if (!f || (!m->tokens && strcmp(argv[1], "invoke"))) {
		printf("usage: bigargs invoke|token 8|20000|70000\n");
		earth_set_exit_status(2);
		EARTH_END_FUNCTION(m);
	}
	/* Every function's block: the done slot, then the bytes. */
	earth_slot_init(&m->s, m->tokens ? TOKENS : 1, 0, main_done, m);
	earth_gslot done = earth_slot_global(&m->s);
	memcpy(m->args, &done, sizeof(done));
	for (long i = 0; i < bytes; i++)
		m->args[sizeof(done) + (size_t)i] = pattern((size_t)i);
	if (!m->tokens) {
		earth_invoke(earth_num_nodes() - 1, f, m->args, f->args_size);
		return;
	}
	for (int k = 0; k < TOKENS; k++)
		earth_token(f, m->args, f->args_size);
}

static void main_done(void *frame)
{
	struct main_frame *m = frame;
	if (m->tokens)
		printf("bigargs: token ok, node 0 ran %ld of %d\n", ran_here,
		       TOKENS);
	else
		printf("bigargs: invoke ok\n");
	EARTH_END_FUNCTION(m);
}

int main(int argc, char **argv)
{
	return earth_main(argc, argv, &bigargs_main);
}
