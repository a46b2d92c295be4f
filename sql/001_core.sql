-- 001_core: the service's tables (contract section 5). InnoDB, utf8mb4.
-- Status values are the seed article's: 0 PENDING, 1 PROCESSING, 2 PAID, 3 FAILED.

CREATE TABLE payment_order (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
  order_no       VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id        BIGINT       NOT NULL,
  amount         DECIMAL(10,2) NOT NULL,
  status         TINYINT      NOT NULL,
  transaction_id VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  lease_until    DATETIME(3)  NULL COMMENT 'PROCESSING: who holds the order until when',
  attempts       INT          NOT NULL DEFAULT 0 COMMENT 'leases taken (attempt fence): only the current attempt may mark FAILED',
  create_time    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_order_no (order_no),
  UNIQUE KEY uk_transaction_id (transaction_id),
  KEY idx_status_lease (status, lease_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE payment_idempotent (
  id            BIGINT       NOT NULL AUTO_INCREMENT,
  user_id       BIGINT       NOT NULL,
  idem_key      VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fingerprint   CHAR(64)     CHARACTER SET ascii NOT NULL COMMENT 'SHA-256 hex of the canonical request',
  state         TINYINT      NOT NULL COMMENT '0 in progress, 1 completed',
  response_code SMALLINT     NULL,
  response_body MEDIUMTEXT   NULL,
  lease_until   DATETIME(3)  NOT NULL,
  created_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  expires_at    DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_user_key (user_id, idem_key),
  KEY idx_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE payment_callback_record (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
  third_party_no VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL COMMENT 'transaction_id',
  order_no       VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL,
  outcome        TINYINT      NOT NULL COMMENT '0 applied, 1 duplicate charge (refund queued)',
  raw_xml        MEDIUMTEXT   NULL,
  create_time    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_third_party_no (third_party_no),
  KEY idx_order_no (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Refunds of duplicate charges, worked by the refund queue: one row per
-- charge to refund, so a refund is requested at most once per transaction.
CREATE TABLE payment_refund (
  id             BIGINT       NOT NULL AUTO_INCREMENT,
  transaction_id VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  order_no       VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  out_refund_no  VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL,
  state          TINYINT      NOT NULL DEFAULT 0 COMMENT '0 pending, 1 done',
  attempts       INT          NOT NULL DEFAULT 0,
  lease_until    DATETIME(3)  NULL,
  create_time    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  update_time    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_refund_txn (transaction_id),
  KEY idx_state (state, lease_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
