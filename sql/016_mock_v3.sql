-- 016_mock_v3: WeChat Pay APIv3 beside v2 in the mock gateway (issue 24,
-- docs/MOCK.md "WeChat Pay APIv3"). The v3 endpoints run the v2 flows on
-- the same rows; the only new fact is the dialect an order or a refund was
-- asked in, which decides the form of its notifications (v2's signed XML,
-- or v3's JSON with an AEAD_AES_256_GCM resource and signed headers).
-- Idempotent (IF NOT EXISTS), like the migrations before; 2 for every
-- existing row.
ALTER TABLE idempay_mock.mock_prepay
  ADD COLUMN IF NOT EXISTS api_version TINYINT NOT NULL DEFAULT 2
    COMMENT '2: created by /pay/unifiedorder or micropay; 3: by /v3/pay/transactions/*';
ALTER TABLE idempay_mock.mock_refund
  ADD COLUMN IF NOT EXISTS api_version TINYINT NOT NULL DEFAULT 2
    COMMENT '2: asked by /secapi/pay/refund; 3: by /v3/refund/domestic/refunds';
