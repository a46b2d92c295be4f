-- 002_mock_ledger: the mock gateway's own ledger, in its own database
-- idempay_mock (qualified names: migrations run with idempay as default db).
-- The ledger is the ground truth of every double-charge check.

CREATE DATABASE IF NOT EXISTS idempay_mock CHARACTER SET utf8mb4;

-- One row per out_trade_no ever seen: dedupe decides on this primary key.
-- transaction_id is the first charge (NULL while nothing was charged);
-- last_result is NOTPAY (seen, SYSTEMERROR), PAYERROR (declined) or SUCCESS.
CREATE TABLE IF NOT EXISTS idempay_mock.mock_trade (
  out_trade_no   VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL COMMENT 'fen, of the first attempt',
  transaction_id CHAR(28)     CHARACTER SET ascii COLLATE ascii_bin NULL,
  last_result    VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  attempts       INT          NOT NULL DEFAULT 1,
  created_at     DATETIME(6)  NOT NULL,
  updated_at     DATETIME(6)  NOT NULL,
  PRIMARY KEY (out_trade_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Every charge the mock made (several per out_trade_no only with dedupe off).
CREATE TABLE IF NOT EXISTS idempay_mock.mock_charge (
  seq            BIGINT       NOT NULL AUTO_INCREMENT,
  transaction_id CHAR(28)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  out_trade_no   VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL COMMENT 'fen',
  refunded_fee   BIGINT       NOT NULL DEFAULT 0 COMMENT 'fen refunded so far',
  refund_count   INT          NOT NULL DEFAULT 0 COMMENT 'distinct refunds (out_refund_no)',
  trade_type     VARCHAR(16)  CHARACTER SET ascii NOT NULL,
  charged_at     DATETIME(6)  NOT NULL COMMENT 'UTC',
  PRIMARY KEY (transaction_id),
  UNIQUE KEY uk_seq (seq),
  KEY idx_out_trade_no (out_trade_no, seq)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Refunds, idempotent by out_refund_no.
CREATE TABLE IF NOT EXISTS idempay_mock.mock_refund (
  out_refund_no  VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  refund_id      CHAR(28)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  transaction_id CHAR(28)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  out_trade_no   VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL,
  refund_fee     BIGINT       NOT NULL,
  refunded_at    DATETIME(6)  NOT NULL COMMENT 'UTC',
  PRIMARY KEY (out_refund_no),
  UNIQUE KEY uk_refund_id (refund_id),
  KEY idx_transaction_id (transaction_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS idempay_mock.mock_counter (
  name           VARCHAR(32)  CHARACTER SET ascii NOT NULL,
  value          BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT IGNORE INTO idempay_mock.mock_counter (name, value) VALUES ('notifications_sent', 0);

-- The knobs (PUT /mock/config), one row of JSON, so a restart keeps them.
CREATE TABLE IF NOT EXISTS idempay_mock.mock_config (
  id             TINYINT      NOT NULL,
  config         TEXT         NOT NULL,
  updated_at     DATETIME(6)  NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
