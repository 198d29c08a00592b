CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`wallet_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`capability_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`policy_id` text NOT NULL,
	`rule` text NOT NULL,
	`status` text NOT NULL,
	`created_at` integer NOT NULL,
	`resolved_by` text,
	`resolved_at` integer,
	`used_at` integer
);
--> statement-breakpoint
CREATE INDEX `approvals_workspace` ON `approvals` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `approvals_purchase` ON `approvals` (`wallet_id`,`capability_id`,`status`);--> statement-breakpoint
CREATE TABLE `policies` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`policy_type` text NOT NULL,
	`name` text,
	`enabled` integer NOT NULL,
	`source` text NOT NULL,
	`rules` text NOT NULL,
	`ordinal` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `policies_workspace` ON `policies` (`workspace_id`,`created_at`,`ordinal`);