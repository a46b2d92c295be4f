-- 014_callers: the merchant door's callers (issue 23, "Two doors";
-- docs/SECURITY.md). A caller is a merchant backend that signs its API
-- requests (docs/API.md, "Authentication"). Its key is never stored: it is
-- HMAC-SHA256(IDEMPAY_WX_KEY, "idempay-caller-v1\n" name "\n" key_salt),
-- derived again by the service on each lookup; key_check is the SHA-256 of
-- that key, so a service running with another merchant key refuses the
-- caller (re-issue it) instead of checking signatures against a wrong key.
-- Managed by idempay-fcgi --add-caller / --list-callers / --disable-caller.
CREATE TABLE IF NOT EXISTS payment_caller (
  id          BIGINT       NOT NULL AUTO_INCREMENT,
  name        VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  key_salt    CHAR(32)     CHARACTER SET ascii NOT NULL COMMENT '128 random bits, hex',
  key_check   CHAR(64)     CHARACTER SET ascii NOT NULL COMMENT 'SHA-256 hex of the derived key',
  enabled     TINYINT      NOT NULL DEFAULT 1,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  disabled_at DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY uk_caller_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Orders belong to the caller that created them (0: made before this
-- migration, or by a unit test calling the modules directly: no caller of
-- the merchant door owns them, so none reads them through the API).
ALTER TABLE payment_order
  ADD COLUMN IF NOT EXISTS caller_id BIGINT NOT NULL DEFAULT 0
    COMMENT 'payment_caller.id of the creator; 0 none' AFTER user_id;

-- Idempotency-Keys are scoped per (caller, user).
ALTER TABLE payment_idempotent
  ADD COLUMN IF NOT EXISTS caller_id BIGINT NOT NULL DEFAULT 0 AFTER id,
  ADD UNIQUE KEY IF NOT EXISTS uk_caller_user_key (caller_id, user_id, idem_key);
ALTER TABLE payment_idempotent DROP INDEX IF EXISTS uk_user_key;
