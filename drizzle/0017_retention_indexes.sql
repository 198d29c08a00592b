CREATE INDEX `rail_events_created` ON `rail_events` (`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event` ON `webhook_deliveries` (`event_id`,`endpoint_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_finished` ON `webhook_deliveries` (`finished_at`);--> statement-breakpoint
CREATE INDEX `alert_mails_finished` ON `alert_mails` (`finished_at`);