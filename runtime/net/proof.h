/* SPDX-License-Identifier: MIT */
/*
 * proof.h - the job secret (EARTH_JOB_SECRET) and the proofs keyed with
 * it by which nodes show each other they belong to the job (tcp's hellos,
 * ucx's first active message each way). The secret never travels.
 */
#ifndef EARTH_PROOF_H
#define EARTH_PROOF_H

#ifndef EARTH_INTERNAL
#error "proof.h is internal to the EARTH runtime"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_SECRET_MIN 16 /* bytes of the job secret */
#define NET_SECRET_MAX 64
#define NET_NONCE_LEN 32
#define NET_MAC_LEN 32 /* HMAC-SHA-256 */

/* The job secret from EARTH_JOB_SECRET (hex) into key (NET_SECRET_MAX
 * bytes), its length in *len; NULL, or what is wrong (transport names
 * the transport asking, for the message). Starts libsodium. */
const char *net_secret_parse(uint8_t *key, uint32_t *len,
			     const char *transport);

/* HMAC-SHA-256 keyed with (key, key_len) over label (with its NUL), then
 * the parts a (alen bytes) and b (blen bytes; NULL when blen is 0). */
void net_proof_mac(uint8_t mac[NET_MAC_LEN], const uint8_t *key, size_t key_len,
		   const char *label, const void *a, size_t alen, const void *b,
		   size_t blen);

/* Whether mac equals want (constant time). */
bool net_proof_equal(const uint8_t *mac, const uint8_t *want);

/* Fills buf with len random bytes (nonces, a fresh job secret). */
void net_random(void *buf, size_t len);

/* Clears a secret's bytes where the compiler cannot skip it. */
void net_forget(void *buf, size_t len);

#endif
