-- 005_failed_recheck: lease_until also carries the FAILED recheck (see
-- order_store_mark_failed): on a FAILED order it is when the reconciler asks
-- the gateway once more whether the order was charged after all (NULL:
-- final). Only the column's comment changes; no data moves.
ALTER TABLE payment_order
  MODIFY lease_until DATETIME(3) NULL
  COMMENT 'PROCESSING: who holds the order until when; FAILED: when to ask the gateway once more (NULL: final)';
