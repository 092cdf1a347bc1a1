/* SPDX-License-Identifier: MIT */
/*
 * remote_load.h - what the remote_load driver (driver.c) and its in-job
 * program (job.c) share. Node 0 of a job prints, for the driver:
 *
 *   RL <base|seq|stages> MS LOADS NS0 UNITS0 NS1 UNITS1   per phase: its
 *        length, the loads done, the EU-thread CPU ns and busy units of
 *        node 0 and node 1
 *   RL thr K MS LOADS UNITS    per k: loads and units of work done
 *   RL total NS                median, EU post .. EU fetch
 *   RL stage S NS              median of stage S (enum below)
 *   RL samples NTOTAL NSTAGE
 * and each node "RL cpu NODE CPU" (where its EU ran).
 */
#ifndef EARTH_REMOTE_LOAD_H
#define EARTH_REMOTE_LOAD_H

#define BUSY_NS 1000.0 /* a busy fiber's work */
#define WORK_NS 1000.0 /* work after each load of a throughput chain */
#define MAXK 64
#define NKS 7
static const int ks[NKS] = {1, 2, 4, 8, 16, 32, 64};

/* The stages of a remote load (signed differences of TSC stamps). */
enum {
	S_POST,	  /* EU posts the request (inside earth_get_sync)    */
	S_FETCH,  /* until the SU takes it                           */
	S_SEND,	  /* SU builds and hands the message to the net      */
	S_XMIT1,  /* transmission and polling / interrupt, to R_READ */
	S_GET,	  /* remote: locate and check the word               */
	S_REPLY,  /* remote: build and hand the reply to the net     */
	S_XMIT2,  /* transmission, polling / interrupt, reply read   */
	S_STORE,  /* store the value, signal the slot                */
	S_READY,  /* into the ready queue                            */
	S_EU,	  /* EU fetches the next fiber                       */
	S_RAISE,  /* irq: post .. signal raised (send + fiber end)   */
	S_IRQLAT, /* irq: signal raised .. remote handler entered    */
	S_RREAD,  /* irq: handler entered .. request read            */
	S_SIGEU,  /* irq: slot signalled .. EU fetches the fiber     */
	S_COUNT
};

/* Sizes the work of fixed size (busy fibers, throughput work) to this
 * machine; returns ns per work iteration. */
double remote_load_calibrate(void);
/* A node of a job (EARTH_MODE from the driver). */
int remote_load_node(int argc, char **argv);

#endif /* EARTH_REMOTE_LOAD_H */
