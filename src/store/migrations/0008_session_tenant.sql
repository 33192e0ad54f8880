ALTER TABLE "sessions" ADD COLUMN "tenant" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
CREATE INDEX "sessions_created_idx" ON "sessions" USING btree ("created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "sessions_tenant_created_idx" ON "sessions" USING btree ("tenant","created_at" DESC NULLS FIRST,"id" DESC NULLS FIRST);--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_tenant_format" CHECK ("sessions"."tenant" ~ '^[A-Za-z0-9_.:-]{1,128}$');