/* paid_cache - direct-mapped, striped-lock cache of PAID orders (terminal,
 * immutable rows), consulted before the database on POST /api/pay. */
#include "paid_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define STRIPES 64

static paid_entry slots[PAID_CACHE_SLOTS];
static pthread_mutex_t stripe[STRIPES] = { [0 ... STRIPES - 1] = PTHREAD_MUTEX_INITIALIZER };

/* FNV-1a */
static size_t slot_of(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return (size_t)(h % PAID_CACHE_SLOTS);
}

bool paid_cache_get(const char *order_no, paid_entry *out)
{
    size_t i = slot_of(order_no);
    bool hit;

    pthread_mutex_lock(&stripe[i % STRIPES]);
    hit = slots[i].order_no[0] && !strcmp(slots[i].order_no, order_no);
    if (hit)
        *out = slots[i];
    pthread_mutex_unlock(&stripe[i % STRIPES]);
    return hit;
}

void paid_cache_put(const char *order_no, long long caller_id, long long user_id,
                    int64_t amount_fen, const char *transaction_id)
{
    paid_entry e;
    size_t i;

    if (strlen(order_no) >= sizeof(e.order_no) ||
        strlen(transaction_id) >= sizeof(e.transaction_id) || !transaction_id[0])
        return;
    memset(&e, 0, sizeof(e));
    snprintf(e.order_no, sizeof(e.order_no), "%s", order_no);
    snprintf(e.transaction_id, sizeof(e.transaction_id), "%s", transaction_id);
    e.caller_id = caller_id;
    e.user_id = user_id;
    e.amount_fen = amount_fen;
    i = slot_of(order_no);
    pthread_mutex_lock(&stripe[i % STRIPES]);
    slots[i] = e;
    pthread_mutex_unlock(&stripe[i % STRIPES]);
}
