/* pending.c - the orders the simulator still waits for (see pending.h). */
#include "pending.h"

#include <stdlib.h>
#include <string.h>

static int settle_is_stray(const char *txn, const char *const *strays, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(strays[i], txn) == 0)
            return 1;
    return 0;
}

size_t pending_orders(const sim_schedule *s, const sim_row *rows, const sim_charge *ch, size_t nch,
                      const char *const *strays, size_t nstrays, size_t *out)
{
    size_t n = 0;
    unsigned char *mark = calloc(s->norders ? s->norders : 1, 1);
    if (mark == NULL)
        return 0;
    for (size_t i = 0; i < s->norders; i++)
        if (rows[i].state == ROW_ERROR || rows[i].state == ROW_UNREAD ||
            (rows[i].state == ROW_PRESENT && rows[i].status == OST_PROCESSING))
            mark[i] = 1;
    for (size_t k = 0; k < nch; k++) {
        long o = ch[k].order;
        if (o < 0)
            continue;
        const sim_row *r = &rows[o];
        if ((r->state != ROW_PRESENT || r->status != OST_PAID) && !ch[k].refunded)
            mark[o] = 1; /* a refunded charge of a closed order has nothing left to do */
        if (!ch[k].refunded && settle_is_stray(ch[k].transaction_id, strays, nstrays) &&
            !(r->state == ROW_PRESENT && r->status == OST_PAID &&
              strcmp(r->transaction_id, ch[k].transaction_id) == 0))
            mark[o] = 1; /* the payer's, and not the order's kept charge */
    }
    /* A PAID order needs a charge with its transaction id: one pass over
     * the ledger marks the orders that have it (value 2), the rest stay. */
    for (size_t k = 0; k < nch; k++) {
        long o = ch[k].order;
        if (o >= 0 && rows[o].state == ROW_PRESENT && rows[o].status == OST_PAID &&
            strcmp(ch[k].transaction_id, rows[o].transaction_id) == 0)
            mark[o] |= 2;
    }
    for (size_t i = 0; i < s->norders; i++) {
        if (rows[i].state == ROW_PRESENT && rows[i].status == OST_PAID && !(mark[i] & 2))
            mark[i] |= 1;
        mark[i] &= 1;
    }
    for (size_t i = 0; i < s->norders; i++)
        if (mark[i])
            out[n++] = i;
    free(mark);
    return n;
}
