-- INSERT OR REPLACE deletes the conflicting row without firing DELETE triggers (unless a
-- connection turns on recursive_triggers), so it could rewrite an entry in place. Refuse
-- any insert that collides with an existing entry, whatever its conflict clause.
CREATE TRIGGER ledger_entries_no_replace BEFORE INSERT ON ledger_entries
WHEN EXISTS (SELECT 1 FROM ledger_entries WHERE id = NEW.id OR (wallet_id = NEW.wallet_id AND seq = NEW.seq))
BEGIN
  SELECT RAISE(ABORT, 'ledger_entries is append-only: an entry with this id or wallet seq exists');
END;
