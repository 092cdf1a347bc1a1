/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the timeline recorder: per-unit buffers, their flush into the
 * node's part file as Chrome trace-event JSON (one event per line), and the
 * final file. Format and viewing: docs/user-guide.md, "Seeing where the
 * time went".
 *
 * Files: with EARTH_TRACE=FILE the node writes FILE.<id>.node<k>.part (id:
 * EARTH_PARTS_ID, else the node's pid). earthrun --trace FILE sets
 * EARTH_TRACE_PARTS=1 and joins the parts of all nodes into FILE after the
 * job; without a launcher a one-node job writes FILE itself and node k of
 * a larger job FILE.node<k>.json (base/jsonparts.h: through a temporary
 * file, or in place for a device). A write error stops tracing, removes
 * the part and makes trace_close fail.
 */
#define _GNU_SOURCE 1
#define EARTH_INTERNAL 1
#include "base/trace.h"
#include "base/jsonparts.h"
#include "base/op.h"
#include "base/settings.h"
#include "base/srctab.h"
#include "base/symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACE_OUT_BUF (64u * 1024u)
#define TRACE_NAMES 1024 /* fiber name cache entries, power of two */

bool trace_on;
struct trace_buf trace_bufs[TRACE_UNITS_];
struct trace_buf *trace_eu_rest;
__thread struct trace_buf *trace_eu_me
    __attribute__((tls_model("initial-exec"))) = &trace_bufs[TRACE_EU];
/* EUs flush their buffers from their own threads: one at a time (the
 * fiber names' cache is shared). */
static pthread_mutex_t eu_flush_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	uint32_t node, nodes;
	double tsc_per_ns;
	double ns_per_tsc; /* 1 / tsc_per_ns: the flush multiplies */
	uint64_t tsc0;
	int64_t ns0; /* ns from the job's epoch to tsc0 */
	int fd;
	bool parts; /* a launcher joins the parts */
	int failed; /* errno of the first write that failed (0: none) */
	char base[3072];
	char part[4096];
	uint64_t *seq_out, *seq_in;
	unsigned eus; /* the node's EUs: EU 0's buffer, then trace_eu_rest */
	struct trace_name {
		uintptr_t fn;
		uint32_t len; /* of name, escaped for JSON */
		char name[124];
	} * names;
	struct trace_names namer;
} tr = {.fd = -1};

uint64_t trace_next_seq_out(uint32_t peer)
{
	return peer < tr.nodes ? tr.seq_out[peer]++ : 0;
}

uint64_t trace_next_seq_in(uint32_t peer)
{
	return peer < tr.nodes ? tr.seq_in[peer]++ : 0;
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Writes all of buf (any thread: the file is O_APPEND, each call one
 * write of whole lines). */
static void put(const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(tr.fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			tr.failed = errno;
			fprintf(stderr,
				"earth: node %u: trace: cannot write %s: %s "
				"(tracing stops)\n",
				tr.node, tr.part, strerror(errno));
			trace_on = false;
			return;
		}
		buf += w;
		len -= (size_t)w;
	}
}

/* EU i's buffer (i < tr.eus). */
static struct trace_buf *eu_buf(unsigned i)
{
	return i ? &trace_eu_rest[i - 1] : &trace_bufs[TRACE_EU];
}

void trace_eu_start(unsigned index)
{
	if (trace_on && index < tr.eus)
		trace_eu_me = eu_buf(index);
}

static int buf_init(struct trace_buf *b, uint64_t cap, uint32_t tid)
{
	*b = (struct trace_buf){
	    .ev = malloc(cap * sizeof(struct trace_ev)),
	    .cap = (uint32_t)cap,
	    .out = malloc(TRACE_OUT_BUF),
	    .tid = tid,
	};
	return b->ev && b->out ? 0 : -1;
}

static void buf_fini(struct trace_buf *b)
{
	free(b->ev);
	free(b->out);
	*b = (struct trace_buf){0};
}

int trace_open(uint32_t node, uint32_t nodes, unsigned eus, double tsc_per_ns,
	       const struct trace_names *names)
{
	tr.namer = *names;
	/* Validated when the node started (base/settings.c). */
	const char *path = earth_setting_str(EARTH_SET_TRACE);
	trace_on = false;
	if (!path)
		return 0;
	uint64_t cap = earth_setting_u64(EARTH_SET_TRACE_EVENTS);
	uint64_t epoch = earth_setting_u64(EARTH_SET_TRACE_EPOCH_NS);
	unsigned long job =
	    earth_setting_given(EARTH_SET_PARTS_ID)
		? (unsigned long)earth_setting_u64(EARTH_SET_PARTS_ID)
		: (unsigned long)getpid();
	tr.failed = 0;
	if (strlen(path) >= sizeof(tr.base) ||
	    !jsonparts_name(tr.part, sizeof(tr.part), path, job, node)) {
		fprintf(stderr,
			"earth: EARTH_TRACE: path too long (%zu bytes)\n",
			strlen(path));
		return -EINVAL;
	}
	strcpy(tr.base, path);
	tr.node = node;
	tr.nodes = nodes;
	tr.tsc_per_ns = tsc_per_ns > 0 ? tsc_per_ns : 1.0;
	tr.ns_per_tsc = 1.0 / tr.tsc_per_ns;
	tr.parts = earth_setting_on(EARTH_SET_TRACE_PARTS);
	tr.seq_out = calloc(nodes, sizeof(*tr.seq_out));
	tr.seq_in = calloc(nodes, sizeof(*tr.seq_in));
	tr.names = calloc(TRACE_NAMES, sizeof(*tr.names));
	tr.eus = eus ? eus : 1;
	trace_eu_rest =
	    tr.eus > 1 ? calloc(tr.eus - 1, sizeof(*trace_eu_rest)) : NULL;
	if (tr.eus > 1 && !trace_eu_rest)
		goto nomem;
	if (buf_init(&trace_bufs[TRACE_SU], cap, 2))
		goto nomem;
	for (unsigned i = 0; i < tr.eus; i++)
		if (buf_init(eu_buf(i), cap, i ? 2 + i : 1))
			goto nomem;
	if (!tr.seq_out || !tr.seq_in || !tr.names)
		goto nomem;
	tr.fd = open(tr.part,
		     O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (tr.fd < 0) {
		fprintf(stderr,
			"earth: node %u: EARTH_TRACE: cannot create %s: %s\n",
			node, tr.part, strerror(errno));
		trace_close();
		return -errno;
	}
	tr.tsc0 = q_tsc();
	int64_t now = mono_ns();
	tr.ns0 = epoch ? now - (int64_t)epoch : 0;
	/* The first event has no comma before it; every later line starts
	 * with one, so the units' flushes can append in any order. Without
	 * a launcher the part is the final file: head now, tail at close. */
	char head[640];
	int len = snprintf(head, sizeof(head),
			   "%s{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_"
			   "name\",\"args\":{\"name\":\"node %u\"}}\n"
			   ",{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_sort_"
			   "index\",\"args\":{\"sort_index\":%u}}\n"
			   ",{\"ph\":\"M\",\"pid\":%u,\"tid\":1,\"name\":"
			   "\"thread_name\",\"args\":{\"name\":\"%s\"}}\n"
			   ",{\"ph\":\"M\",\"pid\":%u,\"tid\":2,\"name\":"
			   "\"thread_name\",\"args\":{\"name\":\"SU\"}}\n",
			   tr.parts ? "" : "{\"traceEvents\":[\n", node, node,
			   node, node, node, tr.eus > 1 ? "EU 0" : "EU", node);
	trace_on = true;
	put(head, (size_t)len);
	/* Several EUs: EU 0's track is "EU 0", the others' follow the SU. */
	for (unsigned i = 1; i < tr.eus; i++) {
		len = snprintf(head, sizeof(head),
			       ",{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":"
			       "\"thread_name\",\"args\":{\"name\":\"EU %u\"}}"
			       "\n",
			       node, eu_buf(i)->tid, i);
		put(head, (size_t)len);
	}
	return 0;
nomem:
	fprintf(stderr,
		"earth: node %u: EARTH_TRACE: out of memory for %" PRIu64
		" events per unit (EARTH_TRACE_EVENTS)\n",
		node, cap);
	trace_close();
	return -ENOMEM;
}

/* ns from the job's epoch at TSC t. */
static int64_t ts_ns(uint64_t t)
{
	return tr.ns0 +
	       (int64_t)((double)(int64_t)(t - tr.tsc0) * tr.ns_per_tsc);
}

/* ---- formatting without stdio (the flush writes every event) ---- */

/* A string literal: its length is known, one copy. */
#define PUT_LIT(o, lit)                                                        \
	(memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

static char *put_u64(char *o, uint64_t v)
{
	char b[24];
	int k = 0;
	do
		b[k++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (k)
		*o++ = b[--k];
	return o;
}

/* ns as µs with three decimals, the trace-event format's unit. */
static char *put_us(char *o, int64_t ns)
{
	if (ns < 0) {
		*o++ = '-';
		ns = -ns;
	}
	o = put_u64(o, (uint64_t)ns / 1000);
	unsigned f = (unsigned)((uint64_t)ns % 1000);
	*o++ = '.';
	*o++ = (char)('0' + f / 100);
	*o++ = (char)('0' + f / 10 % 10);
	*o++ = (char)('0' + f % 10);
	return o;
}

/* Escapes s for a JSON string into o (room bytes, room >= 8); returns
 * the bytes written (no terminator). Names are identifiers, file names
 * and fixed strings; escape anyway. */
static size_t put_name(char *o, size_t room, const char *s)
{
	size_t k = 0;
	for (; *s && k + 7 < room; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			o[k++] = '\\';
			o[k++] = (char)c;
		} else if (c < 0x20) {
			static const char hex[] = "0123456789abcdef";
			memcpy(o + k, "\\u00", 4);
			o[k + 4] = hex[c >> 4];
			o[k + 5] = hex[c & 15];
			k += 6;
		} else {
			o[k++] = (char)c;
		}
	}
	return k;
}

/* e's name is `raw`: kept escaped, with its length. */
static void name_set(struct trace_name *e, const char *raw)
{
	e->len = (uint32_t)put_name(e->name, sizeof(e->name), raw);
}

/* A name for a fiber function: its threaded function and fiber from the
 * source table (fib:THREAD_1), else the threaded function it enters, else its
 * symbol, else module+offset (stable across nodes, addr2line); escaped,
 * from the cache after its first event. EU events only: the thread
 * flushing them. */
static const struct trace_name *fiber_name(uintptr_t fn)
{
	static const struct trace_name any = {.len = 5, .name = "fiber"};
	size_t h = (fn >> 4) * 0x9E3779B97F4A7C15ull >> 54;
	for (size_t i = 0; i < TRACE_NAMES; i++) {
		struct trace_name *e = &tr.names[(h + i) & (TRACE_NAMES - 1)];
		if (e->fn == fn)
			return e;
		if (e->fn)
			continue;
		e->fn = fn;
		char raw[sizeof(e->name)];
		const char *tf = tr.namer.tfunc ? tr.namer.tfunc(fn) : NULL;
		Dl_info di;
		const char *sym;
		if (src_fiber_short((earth_fiber_fn)fn, raw, sizeof(raw))) {
			/* raw holds it */
		} else if (tf) {
			snprintf(raw, sizeof(raw), "%s", tf);
		} else if ((sym = sym_name(fn))) {
			snprintf(raw, sizeof(raw), "%s", sym);
		} else if (dladdr((void *)fn, &di) && di.dli_fname) {
			const char *m = strrchr(di.dli_fname, '/');
			snprintf(raw, sizeof(raw), "fiber %s+0x%lx",
				 m ? m + 1 : di.dli_fname,
				 (unsigned long)(fn - (uintptr_t)di.dli_fbase));
		} else {
			snprintf(raw, sizeof(raw), "fiber 0x%lx",
				 (unsigned long)fn);
		}
		name_set(e, raw);
		return e;
	}
	return &any;
}

/* One event of the track tid as one or two lines of JSON at o (at most
 * 1 KiB); returns the bytes written. */
static size_t format_ev(char *o, const struct trace_ev *e, uint32_t tid)
{
	char *p = o;
	int64_t t0 = ts_ns(e->t0);
	int64_t dur = e->t1 > e->t0
			  ? (int64_t)((double)(e->t1 - e->t0) * tr.ns_per_tsc)
			  : 0;
	bool send = e->kind == TRACE_SEND;
	p = PUT_LIT(p, ",{\"ph\":\"X\",\"pid\":");
	p = put_u64(p, tr.node);
	p = PUT_LIT(p, ",\"tid\":");
	p = put_u64(p, tid);
	p = PUT_LIT(p, ",\"ts\":");
	p = put_us(p, t0);
	p = PUT_LIT(p, ",\"dur\":");
	p = put_us(p, dur);
	p = PUT_LIT(p, ",\"name\":\"");
	if (e->kind == TRACE_FIBER) {
		const struct trace_name *n = fiber_name((uintptr_t)e->arg);
		memcpy(p, n->name, n->len);
		p += n->len;
		p = PUT_LIT(p, "\",\"cat\":\"fiber\"}\n");
		return (size_t)(p - o);
	}
	if (e->kind == TRACE_OP) {
		p += put_name(p, 160,
			      tr.namer.op ? tr.namer.op(e->aux)
					  : su_op_name(e->aux));
		p = PUT_LIT(p, "\",\"cat\":\"op\"}\n");
		return (size_t)(p - o);
	}
	p = send ? PUT_LIT(p, "send ") : PUT_LIT(p, "recv ");
	p += put_name(p, 160, tr.namer.msg ? tr.namer.msg(e->aux) : "message");
	p = PUT_LIT(p, "\",\"cat\":\"msg\",\"args\":{\"peer\":");
	/* The message's arrow: from the sender's slice to the receiver's,
	 * named by (sender, receiver, sequence number on that pair). */
	uint32_t src = send ? tr.node : e->aux2;
	uint32_t dst = send ? e->aux2 : tr.node;
	p = put_u64(p, e->aux2);
	p = PUT_LIT(p, ",\"seq\":");
	p = put_u64(p, e->arg);
	p = send ? PUT_LIT(p, "}}\n,{\"ph\":\"s\",\"pid\":")
		 : PUT_LIT(p, "}}\n,{\"ph\":\"f\",\"bp\":\"e\",\"pid\":");
	p = put_u64(p, tr.node);
	p = PUT_LIT(p, ",\"tid\":2,\"ts\":");
	p = put_us(p, t0);
	p = PUT_LIT(p, ",\"name\":\"message\",\"cat\":\"msg\",\"id\":\"");
	p = put_u64(p, src);
	*p++ = '.';
	p = put_u64(p, dst);
	*p++ = '.';
	p = put_u64(p, e->arg);
	p = PUT_LIT(p, "\"}\n");
	return (size_t)(p - o);
}

static void flush_buf(struct trace_buf *b)
{
	if (!b->len || tr.fd < 0) {
		b->len = 0;
		return;
	}
	/* Slices are recorded when they end, so an enclosing slice comes
	 * after what it encloses: sort by start (nearly sorted already). */
	for (uint32_t i = 1; i < b->len; i++) {
		struct trace_ev e = b->ev[i];
		uint32_t j = i;
		while (j &&
		       (b->ev[j - 1].t0 > e.t0 ||
			(b->ev[j - 1].t0 == e.t0 && b->ev[j - 1].t1 < e.t1))) {
			b->ev[j] = b->ev[j - 1];
			j--;
		}
		b->ev[j] = e;
	}
	char *o = b->out;
	size_t k = 0;
	for (uint32_t i = 0; i < b->len && trace_on; i++) {
		if (TRACE_OUT_BUF - k < 1024) {
			put(o, k);
			k = 0;
		}
		k += format_ev(o + k, &b->ev[i], b->tid);
	}
	if (k && trace_on)
		put(o, k);
	b->len = 0;
}

void trace_flush(enum trace_unit unit)
{
	if (unit == TRACE_SU) {
		flush_buf(&trace_bufs[TRACE_SU]);
		return;
	}
	pthread_mutex_lock(&eu_flush_lock);
	flush_buf(trace_eu_me);
	pthread_mutex_unlock(&eu_flush_lock);
}

int trace_close(void)
{
	int bad = 0;
	bool was_on = trace_on && tr.fd >= 0;
	if (was_on) {
		/* The units ended: every EU's buffer, then the SU's. */
		uint64_t eu_dropped = 0;
		for (unsigned i = 0; i < tr.eus; i++) {
			flush_buf(eu_buf(i));
			eu_dropped += eu_buf(i)->dropped;
		}
		flush_buf(&trace_bufs[TRACE_SU]);
		char line[320];
		int len = snprintf(
		    line, sizeof(line),
		    ",{\"ph\":\"M\",\"pid\":%u,\"name\":\"earth_trace_"
		    "dropped\","
		    "\"args\":{\"eu\":%" PRIu64 ",\"su\":%" PRIu64 "}}\n%s",
		    tr.node, eu_dropped, trace_bufs[TRACE_SU].dropped,
		    tr.parts ? "" : "],\"displayTimeUnit\":\"ns\"}\n");
		put(line, (size_t)len);
		if (eu_dropped || trace_bufs[TRACE_SU].dropped)
			fprintf(
			    stderr,
			    "earth: node %u: trace: %" PRIu64 " EU and %" PRIu64
			    " SU events dropped (buffers full between idle "
			    "moments; raise EARTH_TRACE_EVENTS)\n",
			    tr.node, eu_dropped, trace_bufs[TRACE_SU].dropped);
	}
	trace_on = false;
	if (tr.fd >= 0 && close(tr.fd) != 0 && was_on && !tr.failed) {
		tr.failed = errno;
		fprintf(stderr, "earth: node %u: trace: cannot write %s: %s\n",
			tr.node, tr.part, strerror(errno));
	}
	if (tr.fd >= 0 && tr.failed) {
		/* Nothing partial: the part goes, the node's status says. */
		unlink(tr.part);
		bad = -1;
	} else if (was_on && !tr.parts) {
		char out[4096], err[4400];
		if (tr.nodes > 1)
			snprintf(out, sizeof(out), "%s.node%u.json", tr.base,
				 tr.node);
		else
			snprintf(out, sizeof(out), "%s", tr.base);
		/* The part is the whole file already: head and tail. */
		const char *p = tr.part;
		if (jsonparts_join(out, &p, 1, "", "", 0, err, sizeof(err))) {
			fprintf(stderr, "earth: node %u: trace: %s\n", tr.node,
				err);
			bad = -1;
		}
	}
	tr.fd = -1;
	tr.failed = 0;
	for (unsigned i = 0; i < (tr.eus ? tr.eus : 1); i++)
		if (i == 0 || trace_eu_rest)
			buf_fini(eu_buf(i));
	buf_fini(&trace_bufs[TRACE_SU]);
	free(trace_eu_rest);
	trace_eu_rest = NULL;
	tr.eus = 0;
	trace_eu_me = &trace_bufs[TRACE_EU];
	free(tr.seq_out);
	free(tr.seq_in);
	free(tr.names);
	sym_close();
	tr.seq_out = tr.seq_in = NULL;
	tr.names = NULL;
	tr.nodes = 0;
	return bad;
}
