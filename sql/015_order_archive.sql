-- 015_order_archive: order retention (issue 23, "bounded growth").
--
-- The order retention job (app/order_archive.c, called from the reconciler)
-- moves an order whose state is final and whose last change is older than
-- IDEMPAY_ORDER_RETENTION_DAYS out of the live tables into these archive
-- tables, in one transaction per batch (docs/FENCE.md, "Order retention").
-- What an order owns moves with it: its payment_order row, its
-- payment_trade row (the gateway trade), its payment_refund rows (all
-- finished: SUCCESS) and its payment_callback_record rows (the notifications
-- that applied or refunded a charge of it). What stays: payment_idempotent
-- (keyed by caller and key, expires on its own after
-- IDEMPAY_IDEMPOTENCY_TTL) and the statement tables (kept by day).
--
-- Each archive table has the live table's columns (same names, types and
-- character sets: the job copies them by name), without AUTO_INCREMENT and
-- without the indexes only the live state machine needs; a migration that
-- adds a column to a live table adds it here too, and to the job's column
-- list. payment_order_archive keeps uk_order_no: the pay path's locking read
-- of it decides that an archived order_no is never created again.

CREATE TABLE IF NOT EXISTS payment_order_archive (
  id             BIGINT       NOT NULL,
  order_no       VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  user_id        BIGINT       NOT NULL,
  amount         DECIMAL(10,2) NOT NULL,
  status         TINYINT      NOT NULL,
  transaction_id VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  lease_until    DATETIME(3)  NULL,
  attempts       INT          NOT NULL DEFAULT 0,
  final_reason   TINYINT      NOT NULL DEFAULT 0,
  create_time    DATETIME(3)  NOT NULL,
  update_time    DATETIME(3)  NOT NULL,
  archived_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (id),
  UNIQUE KEY uk_order_no (order_no),
  KEY idx_transaction_id (transaction_id),
  KEY idx_archived_at (archived_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS payment_trade_archive (
  order_no      VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  trade_type    TINYINT      NOT NULL,
  openid        VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL,
  time_expire   CHAR(14)     CHARACTER SET ascii NULL,
  expires_ms    BIGINT       NULL,
  prepay_id     VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  code_url      VARCHAR(256) CHARACTER SET ascii COLLATE ascii_bin NULL,
  sent_at       DATETIME(3)  NULL,
  answered      TINYINT      NOT NULL DEFAULT 0,
  last_query_at DATETIME(3)  NULL,
  create_time   DATETIME(3)  NOT NULL,
  PRIMARY KEY (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS payment_refund_archive (
  id             BIGINT       NOT NULL,
  transaction_id VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  order_no       VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  kind           TINYINT      NOT NULL DEFAULT 0,
  out_refund_no  VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL,
  refund_fee     BIGINT       NOT NULL,
  reason         VARCHAR(80)  NULL,
  refund_id      VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  state          TINYINT      NOT NULL DEFAULT 0,
  attempts       INT          NOT NULL DEFAULT 0,
  lease_until    DATETIME(3)  NULL,
  last_error     VARCHAR(64)  CHARACTER SET ascii NULL,
  create_time    DATETIME(3)  NOT NULL,
  update_time    DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_out_refund_no (out_refund_no),
  KEY idx_refund_order (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS payment_callback_record_archive (
  id             BIGINT       NOT NULL,
  third_party_no VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  order_no       VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  total_fee      BIGINT       NOT NULL,
  outcome        TINYINT      NOT NULL,
  raw_xml        MEDIUMTEXT   NULL,
  create_time    DATETIME(3)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_third_party_no (third_party_no),
  KEY idx_order_no (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The job's search: final orders by their last change. One more index
-- entry per order row (its status changes already rewrite idx_status_lease);
-- without it every round would scan the whole table.
ALTER TABLE payment_order ADD KEY IF NOT EXISTS idx_status_update (status, update_time);
