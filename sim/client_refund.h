/* client_refund - the merchant's refunds of one order (TASK_REFUND): copy 0
 * pays the order first (a MICROPAY client, as today's), every copy then
 * sends its refund requests as the task's plan says (sched_task.copies:
 * refund_plan), and copy 0 reads the order's refunds until none is
 * PROCESSING. See client_refund.c. */
#ifndef IDEMPAY_SIM_CLIENT_REFUND_H
#define IDEMPAY_SIM_CLIENT_REFUND_H

#include "client.h"

/* The refund plans of an order (sched_task.copies). */
typedef enum {
    RP_TWICE = 0, /* the whole charge, one key, two copies at once, then copy 0 again */
    RP_RACE,      /* two copies at once, each 60 % of the charge under its own key:
                     the refunds may not exceed the charge (one is refused 422) */
    RP_PARTS,     /* 30 % (key 1), 30 % (key 2), key 1 again, then the whole (key 3:
                     more than is left, 422 unless a REFUNDCLOSE gave some back) */
    RP_MISMATCH,  /* the whole (key 1), key 1 with half (422), key 1 whole again */
    RP_COUNT
} refund_plan;

/* "twice", "race", "parts", "mismatch" ("?" out of range). */
const char *refund_plan_name(int plan);

/* The amount a plan's request asks for of a charge of fen (at least 1 fen). */
int64_t refund_plan_amount(int64_t fen, int percent);

/* The Idempotency-Key of refund key k of order_no into out. Returns out. */
char *refund_key(const char *order_no, int k, char *out, size_t len);

/* Runs t (a TASK_REFUND) on c's worker. */
void client_task_refund(sim_client *c, const sched_task *t, long task);

#endif
