/* SPDX-License-Identifier: MIT */
/*
 * acct.c - the counters of acct.h. Turning them on and reporting them is
 * the node's (node/report.c).
 */
#define EARTH_INTERNAL 1
#include "base/acct.h"

bool acct_on;
struct acct_eu acct_eu;
struct acct_su acct_su;
struct acct_shared acct_shared;
