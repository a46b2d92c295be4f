-- 007_mock_close: the mock gateway learns closeorder, downloadbill and a
-- journal (docs/MOCK.md). Qualified names: migrations run with idempay as the
-- default database. Idempotent (IF NOT EXISTS), like the migrations before.

-- A close lives on the dedupe row, so a close and a charge of one
-- out_trade_no serialize on the same row lock. A row first created by a
-- close has total_fee 0, attempts 0 and last_result CLOSED.
ALTER TABLE idempay_mock.mock_trade
  ADD COLUMN IF NOT EXISTS closed_at DATETIME(6) NULL
    COMMENT 'UTC: closed by /pay/closeorder (never charged); NULL: open',
  MODIFY last_result VARCHAR(16) CHARACTER SET ascii NOT NULL
    COMMENT 'NOTPAY (seen, SYSTEMERROR), PAYERROR (declined), SUCCESS (charged), CLOSED (first seen by closeorder)',
  ADD INDEX IF NOT EXISTS idx_closed_at (closed_at);

-- The statement (downloadbill) lists charges and refunds by time.
ALTER TABLE idempay_mock.mock_charge
  ADD COLUMN IF NOT EXISTS openid VARCHAR(128) CHARACTER SET ascii NULL
    COMMENT 'the payer (unifiedorder openid); NULL: the mock payer',
  ADD INDEX IF NOT EXISTS idx_charged_at (charged_at);

ALTER TABLE idempay_mock.mock_refund
  ADD INDEX IF NOT EXISTS idx_refunded_at (refunded_at);

-- The journal (GET /mock/requests): every WeChat call the mock answered (kind
-- request) and every notification delivery attempt (kind notification).
-- Appended in its own transactions, never inside a ledger transaction.
CREATE TABLE IF NOT EXISTS idempay_mock.mock_journal (
  seq            BIGINT       NOT NULL AUTO_INCREMENT,
  kind           VARCHAR(12)  CHARACTER SET ascii NOT NULL COMMENT 'request | notification',
  at             DATETIME(6)  NOT NULL COMMENT 'UTC: the call arrived / the delivery started',
  endpoint       VARCHAR(16)  CHARACTER SET ascii NULL COMMENT 'requests: unifiedorder, orderquery, ...',
  out_trade_no   VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  transaction_id CHAR(28)     CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'requests: the charge the call made; notifications: the charge notified',
  fault          VARCHAR(24)  CHARACTER SET ascii NULL COMMENT 'requests: none, error, reset, decline, timeout_after_charge',
  reply          VARCHAR(16)  CHARACTER SET ascii NULL COMMENT 'requests: xml, statement, not_found, reset, withheld',
  return_code    VARCHAR(16)  NULL,
  return_msg     VARCHAR(128) NULL,
  result_code    VARCHAR(16)  NULL,
  err_code       VARCHAR(32)  NULL,
  copy_no        INT          NULL COMMENT 'notifications: which copy (1..notify_copies)',
  attempt        INT          NULL COMMENT 'notifications: 1 for the first delivery, then retries',
  notify_url     VARCHAR(256) NULL,
  http_status    INT          NULL COMMENT 'notifications: the merchant''s HTTP status; NULL: no answer',
  error          VARCHAR(256) NULL COMMENT 'notifications: the transport error, if any',
  latency_ms     BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (seq),
  KEY idx_out_trade_no (out_trade_no, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
