-- 013_statement_days: the statement job reads the gateway's bill by whole
-- China day (WeChat's downloadbill serves day D from D+1 at 10:00), not by
-- a sliding time window (docs/FENCE.md, "The statement job").
--
-- One row per day the job has looked at. state: 0 waiting (not read yet:
-- the gateway has no bill for it yet, or the download failed), 1 open (read,
-- but a charge in it is not settled or queued yet: a refund that could not
-- be queued, an order that kept moving, a confirmation that did not come),
-- 2 done (every charge in it settled or queued). A day is read again on
-- every run for IDEMPAY_STATEMENT_REREAD_DAYS days after it became ready,
-- and after that as long as it is not done.
CREATE TABLE payment_statement_day (
  day          DATE         NOT NULL COMMENT 'the China day of the bill',
  state        TINYINT      NOT NULL DEFAULT 0 COMMENT '0 waiting, 1 open, 2 done',
  `reads`      INT          NOT NULL DEFAULT 0 COMMENT 'bills downloaded and judged',
  bad_lines    INT          NOT NULL DEFAULT 0 COMMENT 'lines set aside at the last read',
  last_read_at DATETIME(3)  NULL,
  last_error   VARCHAR(255) NULL COMMENT 'why the last read did not finish the day',
  PRIMARY KEY (day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Bill lines the job could not read (set aside for an operator; the rest of
-- the bill is judged). One row per day and line number, the latest text.
CREATE TABLE payment_statement_bad_line (
  day        DATE          NOT NULL,
  line_no    INT           NOT NULL,
  reason     VARCHAR(128)  NOT NULL,
  line_text  VARBINARY(2048) NOT NULL COMMENT 'the line as read (cut at 2048 bytes)',
  seen_at    DATETIME(3)   NOT NULL,
  PRIMARY KEY (day, line_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
