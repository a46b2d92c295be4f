-- 012_refunds: refunds that complete (issue 22), and merchant refunds.
--
-- A refund row is one refund at the gateway, named by its out_refund_no
-- (unique): a duplicate charge's whole refund is 'RF' + its transaction_id
-- (one per charge, as before), a merchant refund's is derived from
-- (order_no, Idempotency-Key) (one per key). One charge may now have several
-- merchant refunds, so the unique key moves from transaction_id to
-- out_refund_no.
--
-- state: 0 PENDING (not yet accepted by the gateway; the worker submits it),
-- 1 SUCCESS (refundquery or the refund notification said SUCCESS; before
-- this migration: accepted), 2 ACCEPTED (the gateway accepted it; the
-- worker polls refundquery), 3 REFUNDCLOSE, 4 CHANGE, 5 ABNORMAL (the
-- gateway refused it for good, e.g. USER_ACCOUNT_ABNORMAL). 3, 4 and 5 stop
-- the worker and wait for an operator (idempay-fcgi --list-stuck-refunds).
ALTER TABLE payment_refund
  ADD COLUMN IF NOT EXISTS kind TINYINT NOT NULL DEFAULT 0
    COMMENT '0 duplicate charge (whole), 1 merchant refund (API)' AFTER order_no,
  ADD COLUMN IF NOT EXISTS refund_fee BIGINT NULL
    COMMENT 'fen refunded; NULL: the whole total_fee (rows before 012)' AFTER total_fee,
  ADD COLUMN IF NOT EXISTS reason VARCHAR(80) NULL COMMENT 'refund_desc' AFTER refund_fee,
  ADD COLUMN IF NOT EXISTS refund_id VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'the gateway refund_id' AFTER reason,
  ADD COLUMN IF NOT EXISTS last_error VARCHAR(64) CHARACTER SET ascii NULL
    COMMENT 'the gateway err_code or refund_status that stopped or delayed it' AFTER lease_until,
  MODIFY state TINYINT NOT NULL DEFAULT 0
    COMMENT '0 pending, 1 SUCCESS, 2 accepted, 3 REFUNDCLOSE, 4 CHANGE, 5 abnormal (operator)';

UPDATE payment_refund SET refund_fee = total_fee WHERE refund_fee IS NULL;
ALTER TABLE payment_refund MODIFY refund_fee BIGINT NOT NULL COMMENT 'fen refunded';

ALTER TABLE payment_refund
  ADD UNIQUE KEY IF NOT EXISTS uk_out_refund_no (out_refund_no),
  ADD KEY IF NOT EXISTS idx_refund_txn (transaction_id),
  ADD KEY IF NOT EXISTS idx_refund_order (order_no);
ALTER TABLE payment_refund DROP INDEX IF EXISTS uk_refund_txn;
