-- 017_archive_caller: an archived order keeps the caller that created it
-- (014_callers scoped orders to callers; 015_order_archive was written
-- beside it), so a GET of an archived order is answered only to its caller
-- (docs/FENCE.md, "Order retention"; docs/SECURITY.md, "Scoping").
ALTER TABLE payment_order_archive
  ADD COLUMN IF NOT EXISTS caller_id BIGINT NOT NULL DEFAULT 0 AFTER order_no;
