/* SPDX-License-Identifier: MIT */
/*
 * crit.c - the critical-section flag of crit.h.
 */
#define EARTH_INTERNAL 1
#include "base/crit.h"

__thread volatile sig_atomic_t irq_defer
    __attribute__((tls_model("initial-exec"))) = 1;
