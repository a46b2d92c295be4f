/* paid_cache - a per-process cache of PAID orders, so a repeat of a paid
 * order is answered without a database round trip.
 *
 * Safe because PAID is terminal: once an order is PAID its user, amount and
 * transaction_id never change again (a second charge is refunded, the order
 * is not touched), so an entry can never be stale. Only rows read as PAID
 * from the database are put. Direct-mapped by a hash of order_no, a fixed
 * PAID_CACHE_SLOTS entries (a collision replaces the older entry);
 * thread-safe with striped mutexes. */
#ifndef IDEMPAY_PAID_CACHE_H
#define IDEMPAY_PAID_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#define PAID_CACHE_SLOTS 16384

typedef struct {
    char order_no[33];
    long long caller_id; /* the order's owner (payment_order.caller_id) */
    long long user_id;
    int64_t amount_fen;
    char transaction_id[40];
} paid_entry;

/* true with *out filled when order_no is cached as PAID. */
bool paid_cache_get(const char *order_no, paid_entry *out);
/* Remembers a PAID order (fields too long for the entry are not cached). */
void paid_cache_put(const char *order_no, long long caller_id, long long user_id,
                    int64_t amount_fen, const char *transaction_id);

#endif
