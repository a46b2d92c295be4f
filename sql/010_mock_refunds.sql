-- 010_mock_refunds: the mock gateway's refunds become asynchronous as WeChat
-- Pay v2's are (docs/MOCK.md, "Refunds that complete"). Qualified names:
-- migrations run with idempay as the default database. Idempotent.

-- A refund is accepted (PROCESSING) and ends later as SUCCESS, REFUNDCLOSE or
-- CHANGE. Rows written before this migration (and refunds the mock makes at
-- once, e.g. a reverse) are SUCCESS from the start. outcome is the end the
-- mock drew at acceptance; due_at when it ends; ended_at when it ended.
ALTER TABLE idempay_mock.mock_refund
  ADD COLUMN IF NOT EXISTS status VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'SUCCESS'
    COMMENT 'PROCESSING, SUCCESS, REFUNDCLOSE, CHANGE',
  ADD COLUMN IF NOT EXISTS outcome VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'SUCCESS'
    COMMENT 'the status a PROCESSING refund ends in',
  ADD COLUMN IF NOT EXISTS due_at DATETIME(6) NULL COMMENT 'UTC: a PROCESSING refund ends then',
  ADD COLUMN IF NOT EXISTS ended_at DATETIME(6) NULL COMMENT 'UTC: when it left PROCESSING',
  ADD COLUMN IF NOT EXISTS notify_url VARCHAR(256) CHARACTER SET ascii NULL
    COMMENT 'the refund notification goes there when it ends',
  ADD INDEX IF NOT EXISTS idx_status_due (status, due_at);

-- refunded_fee / refund_count count SUCCESS refunds only; pending_fee holds
-- what accepted refunds not (yet) SUCCESS take (PROCESSING, CHANGE), so no
-- refund can exceed what is left.
ALTER TABLE idempay_mock.mock_charge
  ADD COLUMN IF NOT EXISTS pending_fee BIGINT NOT NULL DEFAULT 0
    COMMENT 'fen of accepted refunds that are PROCESSING or CHANGE';
