CREATE TABLE "alert_mails" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"state" text NOT NULL,
	"attempts" bigint NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"locked_until" bigint,
	"last_error" text,
	"recipients" bigint,
	"created_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
CREATE UNIQUE INDEX "alert_mails_event" ON "alert_mails" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "alert_mails_pending" ON "alert_mails" USING btree ("state","next_attempt_at");