CREATE INDEX "rail_events_created" ON "rail_events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event" ON "webhook_deliveries" USING btree ("event_id","endpoint_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_finished" ON "webhook_deliveries" USING btree ("finished_at");--> statement-breakpoint
CREATE INDEX "alert_mails_finished" ON "alert_mails" USING btree ("finished_at");