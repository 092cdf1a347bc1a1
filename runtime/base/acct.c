/* SPDX-License-Identifier: MIT */
/*
 * acct.c - the counters of acct.h. Turning them on and reporting them is
 * the node's (node/report.c).
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"

bool acct_on;
struct acct_eu acct_eu0;
struct acct_eu *acct_eu_rest;
unsigned acct_eus = 1;
__thread struct acct_eu *acct_me __attribute__((tls_model("initial-exec"))) =
    &acct_eu0;
bool acct_node_wide;
struct acct_posted acct_posted;
struct acct_su acct_su;
struct acct_shared acct_shared;
