ALTER TABLE "sessions" DROP CONSTRAINT "sessions_status_valid";--> statement-breakpoint
ALTER TABLE "session_inputs" DROP CONSTRAINT "session_inputs_kind_valid";--> statement-breakpoint
ALTER TABLE "session_inputs" DROP CONSTRAINT "session_inputs_status_valid";--> statement-breakpoint
DROP INDEX "session_inputs_open_idx";--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "cascade_cancelled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "parent_session_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "root_session_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "depth" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "spawn_input_seq" bigint;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "spawn_tool_call_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "spawn_wait" boolean;--> statement-breakpoint
ALTER TABLE "session_inputs" ADD COLUMN "awaiting" jsonb;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_parent_session_id_sessions_id_fk" FOREIGN KEY ("parent_session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_parent_idx" ON "sessions" USING btree ("parent_session_id","created_at") WHERE "sessions"."parent_session_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "session_inputs_open_idx" ON "session_inputs" USING btree ("session_id","seq") WHERE "session_inputs"."status" in ('pending', 'running', 'waiting');--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_depth_valid" CHECK ("sessions"."depth" >= 0);--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_status_valid" CHECK ("sessions"."status" in ('idle', 'running', 'waiting_for_input', 'waiting_for_children'));--> statement-breakpoint
ALTER TABLE "session_inputs" ADD CONSTRAINT "session_inputs_kind_valid" CHECK ("session_inputs"."kind" in ('send', 'resume', 'timer', 'child'));--> statement-breakpoint
ALTER TABLE "session_inputs" ADD CONSTRAINT "session_inputs_status_valid" CHECK ("session_inputs"."status" in ('pending', 'running', 'waiting', 'done', 'failed', 'cancelled'));