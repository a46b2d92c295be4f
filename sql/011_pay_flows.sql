-- 011_pay_flows: the gateway trade of an order (issue 22, docs/FLOWS.md).
--
-- One row per order, keyed by order_no (= out_trade_no: one gateway trade
-- per order), written before the order row. A table of its own rather than
-- columns of payment_order: payment_order stays the state machine (its
-- compare-and-set statements, its hot read and its indexes are unchanged),
-- while this row is the gateway's side of the order, written once at the
-- start (the flow and the fixed time_expire) and then only by the prepay
-- store (once) and the poll's rate limit (last_query_at).
CREATE TABLE payment_trade (
  order_no      VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  trade_type    TINYINT      NOT NULL COMMENT '0 NATIVE, 1 JSAPI, 2 MICROPAY',
  openid        VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL COMMENT 'JSAPI: the payer',
  time_expire   CHAR(14)     CHARACTER SET ascii NULL
    COMMENT 'NATIVE/JSAPI: yyyyMMddHHmmss China time, fixed at insert, sent on every unifiedorder',
  expires_ms    BIGINT       NULL COMMENT 'time_expire as Unix time in ms',
  prepay_id     VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NULL,
  code_url      VARCHAR(256) CHARACTER SET ascii COLLATE ascii_bin NULL,
  sent_at       DATETIME(3)  NULL COMMENT 'MICROPAY: when the current attempt sent its micropay',
  last_query_at DATETIME(3)  NULL COMMENT 'the last orderquery a client poll triggered (rate limit)',
  create_time   DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (order_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
