-- Signing keys' private halves in the database (src/domain/payments/signing-keys.ts): sealed with
-- the operator's key-encryption key, in clear in a sandbox without one, or null while the key is
-- only in DATA_DIR/keys. At most one current key: instances started together on a fresh database
-- each made one before; all but the newest are retired here (still retrievable by id, so what
-- they signed stays verifiable) before the index that keeps it so.
ALTER TABLE `signing_keys` ADD `private_key` text;--> statement-breakpoint
UPDATE `signing_keys` SET `status` = 'retired', `retired_at` = CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE `status` = 'current' AND `id` <> (SELECT `id` FROM `signing_keys` WHERE `status` = 'current' ORDER BY `created_at` DESC, `id` DESC LIMIT 1);--> statement-breakpoint
CREATE UNIQUE INDEX `signing_keys_one_current` ON `signing_keys` (`status`) WHERE status = 'current';
