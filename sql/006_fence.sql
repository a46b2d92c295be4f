-- 006_fence: the attempt fence (docs/FENCE.md) and the statement job.
--
-- payment_order.final_reason: a FAILED order that can never be paid. 0: a
-- FAILED order may be tried again by a later POST (a definitive decline);
-- 1: its uncertain attempt was closed at the gateway (closeorder), so its
-- out_trade_no can never be charged: every later POST answers 402
-- payment_closed; 2: the gateway charged another amount than the order's,
-- and that charge was queued for refund. A final order never becomes PAID:
-- any charge of it that still appears is refunded.
ALTER TABLE payment_order
  ADD COLUMN final_reason TINYINT NOT NULL DEFAULT 0
  COMMENT '0 FAILED may be retried; 1 closed at the gateway; 2 charged a wrong amount (refunded)'
  AFTER attempts;

-- Idempotency-Key values compare byte for byte: ascii_bin is a PAD SPACE
-- collation, under which "k" and "k " were one key.
ALTER TABLE payment_idempotent
  MODIFY idem_key VARCHAR(255) CHARACTER SET ascii COLLATE ascii_nopad_bin NOT NULL;

-- The statement job's single row: which process runs the next statement
-- (a lease taken by compare-and-set, also the earliest time of the next
-- run) and up to when the gateway's statement
-- has been read (the next run starts a little before it).
CREATE TABLE payment_statement_job (
  name          VARCHAR(32)  CHARACTER SET ascii NOT NULL,
  lease_until   DATETIME(3)  NULL COMMENT 'the run in progress holds the job until then',
  covered_until_ms BIGINT    NULL COMMENT 'Unix time in ms: statement records before it were judged',
  runs          BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO payment_statement_job (name) VALUES ('statement');
