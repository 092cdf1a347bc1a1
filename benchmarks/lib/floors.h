/* SPDX-License-Identifier: MIT */
/*
 * floors.h - the floors the benchmarks compare the runtime with, each
 * measured between two processes on the two CPUs a node uses (EARTH_CPUS,
 * else 0,1; bench_cpus), in the same run as the figure compared:
 *
 *   ping-pong over shared memory (one line each way) and over a loopback
 *   TCP socket pair (64 bytes, the receiver polling), a TCP stream, and the
 *   latency of a real-time signal to a thread that computes or sleeps.
 *
 * The memcpy floor of a block move is measured inside the job that does
 * the moves (remote_ops), alternated with them on the same bytes.
 * bench_xcore_rtt_ns (bench.h) is the floor of an EU<->SU exchange within
 * one process.
 */
#ifndef EARTH_BENCH_FLOORS_H
#define EARTH_BENCH_FLOORS_H

#include <stddef.h>

/* Two processes, one shared cache line each way: ns per round trip over
 * `rounds` (the first tenth not timed). */
double bench_pingpong_rtt_shm(long rounds);
/* 64-byte ping-pong over loopback TCP, the receiver spinning on
 * recv(MSG_DONTWAIT) as a polling SU would: ns per round trip over
 * `rounds` (the first tenth not timed); -1 when the sockets fail. */
double bench_pingpong_rtt_tcp(long rounds);
/* One process streams `bytes` to another over loopback TCP: MB/s; -1
 * when the sockets fail. */
double bench_tcp_stream_bw(size_t bytes);
/* Interrupt latency: a child pinned to CPU 1 computes (busy) or sleeps in
 * pause() (idle); the parent, on CPU 0, raises a real-time signal with
 * tgkill; the handler stamps the TSC. Median ns from raise to handler
 * over `n` signals (at most 256; NAN when none arrived); *send_ns: the
 * median cost of the tgkill to the sender. */
double bench_signal_floor_ns(int busy, int n, double *send_ns);

#endif /* EARTH_BENCH_FLOORS_H */
