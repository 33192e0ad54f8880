/** The CLI help. Lists only commands that exist (DEVELOPERS.md: keep the CLI help current with the code). */
export const HELP = `loopfleet — durable AI-agent sessions on a worker fleet

Usage:
  loopfleet <command> [options]

Commands:
  migrate [--create-database]   Apply the committed database migrations to DATABASE_URL.
                                Idempotent; safe when several processes run it at once.
                                --create-database creates the database first if it is missing.
  help                          Show this help.
  version                       Print the version.

Environment (validated at start; see README for all of them):
  DATABASE_URL   Postgres connection string (default postgres://postgres:postgres@127.0.0.1:5432/loopfleet)
  REDIS_URL      Redis connection string (default redis://127.0.0.1:6379)
  LOG_LEVEL      fatal|error|warn|info|debug|trace|silent (default info)
  LOG_FORMAT     json|pretty (default json)

Exit codes: 0 success, 1 failure or invalid configuration, 2 bad command line.
`;
