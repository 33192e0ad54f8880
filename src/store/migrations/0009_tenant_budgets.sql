CREATE TABLE "budget_reservations" (
	"session_id" text NOT NULL,
	"call_key" text NOT NULL,
	"budget_id" bigint NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"amount" bigint NOT NULL,
	"lease_token" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budget_reservations_session_id_call_key_budget_id_pk" PRIMARY KEY("session_id","call_key","budget_id")
);
--> statement-breakpoint
CREATE TABLE "budget_usage" (
	"budget_id" bigint NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"used" bigint DEFAULT 0 NOT NULL,
	"reserved" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budget_usage_budget_id_window_start_pk" PRIMARY KEY("budget_id","window_start"),
	CONSTRAINT "budget_usage_reserved_valid" CHECK ("budget_usage"."reserved" >= 0)
);
--> statement-breakpoint
CREATE TABLE "budgets" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "budgets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"scope" text NOT NULL,
	"tenant" text NOT NULL,
	"agent" text DEFAULT '' NOT NULL,
	"session_id" text DEFAULT '' NOT NULL,
	"unit" text NOT NULL,
	"period" text NOT NULL,
	"limit_amount" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "budgets_scope_valid" CHECK ("budgets"."scope" in ('session', 'tenant', 'agent')),
	CONSTRAINT "budgets_unit_valid" CHECK ("budgets"."unit" in ('tokens', 'usd')),
	CONSTRAINT "budgets_period_valid" CHECK ("budgets"."period" in ('total', 'day', 'month')),
	CONSTRAINT "budgets_limit_valid" CHECK ("budgets"."limit_amount" >= 0),
	CONSTRAINT "budgets_target_valid" CHECK (("budgets"."scope" = 'session') = ("budgets"."session_id" <> '') AND ("budgets"."scope" = 'agent') = ("budgets"."agent" <> ''))
);
--> statement-breakpoint
CREATE TABLE "tenant_settings" (
	"tenant" text PRIMARY KEY NOT NULL,
	"weight" integer DEFAULT 100 NOT NULL,
	"max_concurrent_inputs" integer,
	"max_inputs_per_second" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tenant_settings_tenant_format" CHECK ("tenant_settings"."tenant" ~ '^[A-Za-z0-9_.:-]{1,128}$'),
	CONSTRAINT "tenant_settings_weight_valid" CHECK ("tenant_settings"."weight" between 1 and 10000),
	CONSTRAINT "tenant_settings_concurrency_valid" CHECK ("tenant_settings"."max_concurrent_inputs" is null or "tenant_settings"."max_concurrent_inputs" > 0),
	CONSTRAINT "tenant_settings_rate_valid" CHECK ("tenant_settings"."max_inputs_per_second" is null or "tenant_settings"."max_inputs_per_second" > 0)
);
--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "stat_cost_picousd" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_rounds" ADD COLUMN "cost_picousd" bigint;--> statement-breakpoint
ALTER TABLE "usage_rounds" ADD COLUMN "tenant" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_rounds" ADD COLUMN "agent" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "budget_reservations" ADD CONSTRAINT "budget_reservations_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "budget_usage" ADD CONSTRAINT "budget_usage_budget_id_budgets_id_fk" FOREIGN KEY ("budget_id") REFERENCES "public"."budgets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "budget_reservations_created_idx" ON "budget_reservations" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "budgets_scope_key" ON "budgets" USING btree ("tenant","scope","agent","session_id","unit","period");--> statement-breakpoint
CREATE INDEX "budgets_session_idx" ON "budgets" USING btree ("session_id") WHERE "budgets"."scope" = 'session';--> statement-breakpoint
CREATE INDEX "sessions_tenant_leased_idx" ON "sessions" USING btree ("tenant") WHERE "sessions"."lease_expires_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "usage_rounds_tenant_time_idx" ON "usage_rounds" USING btree ("tenant","created_at");--> statement-breakpoint
CREATE INDEX "usage_rounds_time_idx" ON "usage_rounds" USING btree ("created_at");--> statement-breakpoint
UPDATE "usage_rounds" AS u SET "tenant" = s."tenant", "agent" = s."agent" FROM "sessions" AS s WHERE s."id" = u."session_id";--> statement-breakpoint
CREATE OR REPLACE FUNCTION loopfleet_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$ SELECT now() $$;
