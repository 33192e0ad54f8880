ALTER TABLE "sessions" ADD COLUMN "stat_cache_write_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_rounds" ADD COLUMN "cache_write_tokens" integer DEFAULT 0 NOT NULL;