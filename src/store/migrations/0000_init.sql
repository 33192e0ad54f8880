CREATE SEQUENCE "public"."lease_token_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"agent" text DEFAULT 'default' NOT NULL,
	"system_prompt" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"config" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text DEFAULT 'idle' NOT NULL,
	"next_seq" bigint DEFAULT 0 NOT NULL,
	"next_message_seq" bigint DEFAULT 0 NOT NULL,
	"lease_owner" text,
	"lease_token" bigint DEFAULT 0 NOT NULL,
	"lease_expires_at" timestamp with time zone,
	"pending" jsonb,
	"cancel_requested_at" timestamp with time zone,
	"stat_inputs" bigint DEFAULT 0 NOT NULL,
	"stat_rounds" bigint DEFAULT 0 NOT NULL,
	"stat_llm_calls" bigint DEFAULT 0 NOT NULL,
	"stat_tool_calls" bigint DEFAULT 0 NOT NULL,
	"stat_prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"stat_completion_tokens" bigint DEFAULT 0 NOT NULL,
	"stat_cached_tokens" bigint DEFAULT 0 NOT NULL,
	"stat_reasoning_tokens" bigint DEFAULT 0 NOT NULL,
	"stat_total_tokens" bigint DEFAULT 0 NOT NULL,
	"first_input_at" timestamp with time zone,
	"last_input_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sessions_id_format" CHECK ("sessions"."id" ~ '^[A-Za-z0-9_.:-]{1,128}$'),
	CONSTRAINT "sessions_status_valid" CHECK ("sessions"."status" in ('idle', 'running', 'waiting_for_input'))
);
--> statement-breakpoint
CREATE TABLE "session_inputs" (
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"input_id" text NOT NULL,
	"kind" text NOT NULL,
	"mode" text DEFAULT 'queue' NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"steered_into" bigint,
	"result" jsonb,
	"error_code" text,
	"error_message" text,
	"origin_job_id" text,
	"accepted_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	CONSTRAINT "session_inputs_session_id_seq_pk" PRIMARY KEY("session_id","seq"),
	CONSTRAINT "session_inputs_kind_valid" CHECK ("session_inputs"."kind" in ('send', 'resume', 'timer')),
	CONSTRAINT "session_inputs_mode_valid" CHECK ("session_inputs"."mode" in ('queue', 'steer', 'interrupt')),
	CONSTRAINT "session_inputs_status_valid" CHECK ("session_inputs"."status" in ('pending', 'running', 'done', 'failed', 'cancelled')),
	CONSTRAINT "session_inputs_seq_positive" CHECK ("session_inputs"."seq" > 0),
	CONSTRAINT "session_inputs_steered_done" CHECK ("session_inputs"."steered_into" is null or "session_inputs"."status" = 'done')
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"input_seq" bigint,
	"round" integer,
	"role" text NOT NULL,
	"kind" text DEFAULT 'message' NOT NULL,
	"content" jsonb NOT NULL,
	"tool_calls" jsonb,
	"tool_call_id" text,
	"name" text,
	"is_error" boolean DEFAULT false NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "messages_session_id_seq_pk" PRIMARY KEY("session_id","seq"),
	CONSTRAINT "messages_role_valid" CHECK ("messages"."role" in ('system', 'user', 'assistant', 'tool')),
	CONSTRAINT "messages_state_valid" CHECK ("messages"."state" in ('active', 'compacted')),
	CONSTRAINT "messages_kind_valid" CHECK ("messages"."kind" in ('message', 'compact_note', 'notice', 'degraded', 'synthetic_tool_result')),
	CONSTRAINT "messages_tool_has_call_id" CHECK ("messages"."role" <> 'tool' or "messages"."tool_call_id" is not null)
);
--> statement-breakpoint
CREATE TABLE "tool_calls" (
	"session_id" text NOT NULL,
	"tool_call_id" text NOT NULL,
	"input_seq" bigint NOT NULL,
	"round" integer NOT NULL,
	"name" text NOT NULL,
	"args" jsonb,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"idempotency_key" text NOT NULL,
	"error_code" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"duration_ms" integer,
	CONSTRAINT "tool_calls_session_id_tool_call_id_pk" PRIMARY KEY("session_id","tool_call_id"),
	CONSTRAINT "tool_calls_status_valid" CHECK ("tool_calls"."status" in ('started', 'completed', 'failed', 'in_doubt', 'aborted'))
);
--> statement-breakpoint
CREATE TABLE "timers" (
	"session_id" text NOT NULL,
	"timer_id" text NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"note" text DEFAULT '' NOT NULL,
	"every_ms" bigint,
	"status" text DEFAULT 'armed' NOT NULL,
	"fire_count" integer DEFAULT 0 NOT NULL,
	"created_by" text DEFAULT 'host' NOT NULL,
	"last_fired_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "timers_session_id_timer_id_pk" PRIMARY KEY("session_id","timer_id"),
	CONSTRAINT "timers_status_valid" CHECK ("timers"."status" in ('armed', 'firing', 'fired', 'cancelled')),
	CONSTRAINT "timers_created_by_valid" CHECK ("timers"."created_by" in ('host', 'agent'))
);
--> statement-breakpoint
CREATE TABLE "usage_rounds" (
	"session_id" text NOT NULL,
	"input_seq" bigint NOT NULL,
	"round" integer NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"llm_calls" integer DEFAULT 1 NOT NULL,
	"prompt_tokens" integer DEFAULT 0 NOT NULL,
	"completion_tokens" integer DEFAULT 0 NOT NULL,
	"cached_tokens" integer DEFAULT 0 NOT NULL,
	"reasoning_tokens" integer DEFAULT 0 NOT NULL,
	"total_tokens" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "usage_rounds_session_id_input_seq_round_pk" PRIMARY KEY("session_id","input_seq","round")
);
--> statement-breakpoint
CREATE TABLE "compactions" (
	"session_id" text NOT NULL,
	"note_seq" bigint NOT NULL,
	"input_seq" bigint,
	"from_seq" bigint NOT NULL,
	"to_seq" bigint NOT NULL,
	"folded_messages" integer NOT NULL,
	"estimated_tokens_before" integer NOT NULL,
	"estimated_tokens_after" integer NOT NULL,
	"model" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "compactions_session_id_note_seq_pk" PRIMARY KEY("session_id","note_seq")
);
--> statement-breakpoint
ALTER TABLE "session_inputs" ADD CONSTRAINT "session_inputs_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "timers" ADD CONSTRAINT "timers_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_rounds" ADD CONSTRAINT "usage_rounds_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "compactions" ADD CONSTRAINT "compactions_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sessions_lease_expires_idx" ON "sessions" USING btree ("lease_expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "session_inputs_input_id_uq" ON "session_inputs" USING btree ("session_id","input_id");--> statement-breakpoint
CREATE INDEX "session_inputs_open_idx" ON "session_inputs" USING btree ("session_id","seq") WHERE "session_inputs"."status" in ('pending', 'running');--> statement-breakpoint
CREATE INDEX "session_inputs_steered_into_idx" ON "session_inputs" USING btree ("session_id","steered_into") WHERE "session_inputs"."steered_into" is not null;--> statement-breakpoint
CREATE INDEX "session_inputs_pending_age_idx" ON "session_inputs" USING btree ("accepted_at") WHERE "session_inputs"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "messages_active_idx" ON "messages" USING btree ("session_id","seq") WHERE "messages"."state" = 'active';--> statement-breakpoint
CREATE INDEX "tool_calls_open_idx" ON "tool_calls" USING btree ("session_id") WHERE "tool_calls"."status" in ('started', 'in_doubt');--> statement-breakpoint
CREATE INDEX "timers_armed_due_idx" ON "timers" USING btree ("due_at") WHERE "timers"."status" = 'armed';