-- 009_mock_flows: the mock gateway's payment flows as WeChat Pay v2 runs
-- them (docs/MOCK.md "Payment flows"): prepay orders (unifiedorder) paid
-- later by the mock's payer, and payment-code orders (micropay) with
-- USERPAYING and reverse. Qualified names: migrations run with idempay as the
-- default database. Idempotent (IF NOT EXISTS), like the migrations before.
--
-- One row per out_trade_no that unifiedorder (prepay mode) or micropay
-- created. The money stays in mock_trade / mock_charge / mock_refund: a
-- payment is a charge made through ledger_attempt, a close or a reverse of an
-- unpaid order sets mock_trade.closed_at, so the race of a payment and a
-- close is still decided on the mock_trade row. Times are the mock's clock
-- (real time + clock_offset_ms) in ms since the epoch, UTC.
CREATE TABLE IF NOT EXISTS idempay_mock.mock_prepay (
  out_trade_no   VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  micropay       TINYINT      NOT NULL DEFAULT 0 COMMENT '1: a micropay order (reverse is its fence)',
  prepay_id      VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  code_token     VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'NATIVE: the pr= of code_url',
  trade_type     VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  openid         VARCHAR(128) CHARACTER SET ascii NULL,
  total_fee      BIGINT       NOT NULL,
  fingerprint    CHAR(32)     CHARACTER SET ascii NOT NULL
    COMMENT 'the request''s parameters (all but nonce_str, sign, sign_type)',
  notify_url     VARCHAR(256) NULL,
  created_ms     BIGINT       NOT NULL,
  expire_ms      BIGINT       NOT NULL COMMENT 'time_expire (or created + prepay_ttl_ms)',
  prepay_until_ms BIGINT      NOT NULL COMMENT 'the prepay_id lives until (created + prepay_ttl_ms, at most expire_ms)',
  state          VARCHAR(16)  CHARACTER SET ascii NOT NULL
    COMMENT 'NOTPAY, USERPAYING, PAID, PAYERROR, REVOKED',
  resolve_ms     BIGINT       NOT NULL DEFAULT 0 COMMENT 'USERPAYING: resolves then',
  resolve_pay    TINYINT      NOT NULL DEFAULT 0 COMMENT 'USERPAYING: resolves to paid',
  answered_ms    BIGINT       NOT NULL DEFAULT 0 COMMENT 'micropay: its last answer (reverse waits from it)',
  paying_until_ms BIGINT      NOT NULL DEFAULT 0 COMMENT 'the payer confirms a payment until then',
  race_txid      CHAR(28)     CHARACTER SET ascii COLLATE ascii_bin NULL
    COMMENT 'a payment confirmed at the instant of a close (close_race_rate)',
  PRIMARY KEY (out_trade_no),
  UNIQUE KEY uk_prepay_id (prepay_id),
  UNIQUE KEY uk_code_token (code_token),
  KEY idx_resolve (state, resolve_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
