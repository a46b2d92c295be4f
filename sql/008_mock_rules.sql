-- 008_mock_rules: the mock's journal says which targeted fault rule (its
-- index in the rules of PUT /mock/config, docs/MOCK.md) decided a call.
-- Qualified names: migrations run with idempay as the default database.
-- Idempotent (IF NOT EXISTS), like the migrations before.
ALTER TABLE idempay_mock.mock_journal
  ADD COLUMN IF NOT EXISTS rule INT NULL
    COMMENT 'requests: the index of the rule that decided the fault; NULL: the random knobs';
