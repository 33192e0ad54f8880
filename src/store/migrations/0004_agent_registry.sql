CREATE TABLE "agent_registry" (
	"worker_id" text NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"tools" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "agent_registry_worker_id_name_pk" PRIMARY KEY("worker_id","name")
);
--> statement-breakpoint
CREATE INDEX "agent_registry_name_idx" ON "agent_registry" USING btree ("name","seen_at");--> statement-breakpoint
CREATE INDEX "agent_registry_seen_idx" ON "agent_registry" USING btree ("seen_at");