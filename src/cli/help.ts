import { MAX_ABORT_REASON_LENGTH, MAX_INTERACTION_ID_LENGTH } from '../core/input-payload.js';
import { MAX_TIMER_DELAY_DAYS } from '../fleet/timer-limits.js';
import { HISTORY_LIMIT, HISTORY_PAGE } from './commands/history.js';
import { TAIL_LIMIT } from './commands/tail.js';
import { TIMER_EVERY, TIMER_IN } from './commands/timers.js';
import { FORCED_EXIT_MS, WORKER_GRACE_MS } from './commands/worker.js';

/** The CLI help. Lists only commands that exist (keep it current with the code; a CLI test checks it names exactly the commands that exist). */
export const HELP = `loopfleet — durable AI-agent sessions on a worker fleet

Usage:
  loopfleet <command> [options]

Fleet:
  worker [--grace <ms>]         Run a worker until SIGTERM/SIGINT. The first signal stops taking work
                                and lets running inputs finish for up to --grace ms (default 30000,
                                ${WORKER_GRACE_MS.min} to ${WORKER_GRACE_MS.max}); a second signal aborts them and hands their
                                sessions to other workers, and exits 1 if the close has not
                                finished ${FORCED_EXIT_MS / 1000} s later. A failed start or close exits 1.
                                Start it as node --max-semi-space-size=32 (npm run worker, compose):
                                less GC per input for a little memory (docs/fleet.md, "Memory").
  gateway [--port <n>] [--host <address>]
                                Serve the HTTP/SSE API under /v1 and the session viewer at /
                                until SIGTERM/SIGINT (docs/gateway.md). --port and --host win over
                                GATEWAY_PORT (default 8080) and GATEWAY_HOST (default 127.0.0.1).
  migrate [--create-database]   Apply the committed database migrations to DATABASE_URL.
                                Idempotent; safe when several processes run it at once.
                                --create-database creates the database first if it is missing.
  agents [--json]               List the agents the fleet serves now: name, version, provider, model,
                                tools, and each worker serving it with when it was last seen.
                                --json: one agent as JSON a line.

Sessions:
  send <session> <text> [--follow] [--mode queue|steer|interrupt] [--input-id <id>] [--agent <name>]
                                Accept a user message; prints "accepted <session> seq <n>".
                                --follow streams the reply to stdout and exits with its status
                                (exit codes below). --mode: how it joins a running input (default
                                queue). --input-id: idempotency key; repeating it returns the same seq.
                                --agent: the agent it is for; a new session runs on it (see agents).
  tail <session> [--after <id>] [--json] [--limit <n>]
                                Print the session's events as they arrive, one a line, until Ctrl-C
                                (exit 0). For a child session, "# child of <parent> (…)" first, on stderr.
                                --after: resume after a stream id, 0 = from the oldest retained event
                                (default: only new ones). Lost events show as a "--- GAP" line.
                                --json: each event or gap as JSON. --limit: exit after n lines
                                (${TAIL_LIMIT.min} to ${TAIL_LIMIT.max}).
  history <session> [--json] [--all] [--after <seq>] [--limit <n>]
                                Print the session's messages from Postgres, read ${HISTORY_PAGE} at a time.
                                --json: one JSON object a line. --all: include messages folded away
                                by compaction. --after: start after this message seq (default 0, the
                                beginning). --limit: stop after n messages (${HISTORY_LIMIT.min} to ${HISTORY_LIMIT.max}).
                                For a child session, "# child of <parent> (…)" first, on stderr.
  stats <session> [--json]      Print the session's agent, status, counters and inputs by status,
                                its place in a tree of child sessions (parent, depth, children),
                                then one line per input with the agent that ran it (name@version).
                                --json: all of it as one JSON object. Exit 1: no such session.
  cancel <session>              Cancel the running input; it ends "cancelled", and so do those of the
                                session's child sessions. Exit 1: no such session.
  resume <session>              Queue a resume: finish open tool calls and run another round.
  abort-pending <session> [--reason <text>]
                                Close every open tool call and question with "<aborted: reason>"
                                (--reason: at most ${MAX_ABORT_REASON_LENGTH} characters, default "aborted").
  submit-input <session> <interaction> <value>
                                Answer a request_user_input question (<interaction>: its id as
                                send --follow prints it, 1 to ${MAX_INTERACTION_ID_LENGTH} characters). The value is
                                parsed as JSON when it parses (42, true, {"a":1}), else taken as
                                text; so is JSON with a number a JS number would change
                                (12345678901234567890, 0.1000000000000000055511151231257827): every
                                digit is kept.

Timers:
  timer <session> <note> (--in <ms> | --at <time>) [--every <ms>] [--id <timer>]
                                Schedule a durable timer: when it fires, the session gets the note
                                as a <timer> message. --in: ms from now (${TIMER_IN.min} to ${TIMER_IN.max});
                                --at: an ISO 8601 time within ${MAX_TIMER_DELAY_DAYS} days of now (2026-11-25T09:00:00Z; a
                                past time fires at once). --every: fire again
                                every ms (${TIMER_EVERY.min} to ${TIMER_EVERY.max}). --id: its id (1 to 100
                                characters); a repeated id returns the stored timer. Prints
                                "scheduled <session> timer <id> due <time>".
  timers <session> [--all] [--json]
                                List the armed timers, soonest first (--all: every timer, newest first).
  cancel-timer <session> <timer>
                                Cancel an armed timer. Exit 1: no armed timer with that id.

Operators (docs/budgets.md, docs/usage.md):
  budget set|get|list|delete    Spending caps on a session, a tenant or a tenant's agent:
                                  budget set --scope tenant|agent|session [--tenant <t>]
                                    [--agent <a>] [--session <id>] --unit tokens|usd
                                    --period total|day|month --limit <n> [--json]
                                  budget get <id> [--json]
                                  budget list [--tenant <t>] [--scope <s>] [--agent <a>]
                                    [--session <id>] [--json]
                                  budget delete <id>
                                set creates the budget or replaces the limit of the one with the
                                same scope, target, unit and period. --limit: tokens, or USD with
                                at most 12 decimals (0.01). A session budget takes its session's
                                tenant. get and list show the current window (used, reserved,
                                remaining). Exit 1: no such budget.
  usage [--from <date>] [--to <date>] [--tenant <t>] [--agent <a>] [--by day|agent|model|session]
        [--limit <n>] [--json | --csv]
                                Tokens and cost used in [--from, --to) (default: this UTC month so
                                far), grouped --by (default day), with a TOTAL line. --json: the
                                report as one object. --csv: a line per group, cost as exact decimal
                                USD and picodollars (for billing). --limit: groups shown
                                (1 to 10000, default 1000; the totals cover all).
  tenant set|get|list|delete    A tenant's dispatch settings:
                                  tenant set <tenant> [--weight <n>] [--max-concurrent <n>|none]
                                    [--max-rate <n>|none] [--json]
                                  tenant get <tenant> [--json]
                                  tenant list [--json]
                                  tenant delete <tenant>
                                set changes only the options given: the share of the workers
                                (weight 1 to 10000, default 100), inputs running at once across the
                                fleet, inputs admitted per second (none: no cap). get prints the
                                defaults for a tenant without settings; delete returns to them
                                (exit 1: it had none).

  help                          Show this help (also: -h, --help, or no command).
  version                       Print the version (also: -v, --version).

Environment (validated at start; see README for all of them):
  DATABASE_URL      Postgres connection string (default postgres://postgres:postgres@127.0.0.1:5432/loopfleet)
  REDIS_URL         Redis connection string (default redis://127.0.0.1:6379)
  LOOPFLEET_QUEUE   BullMQ queue name and Redis key prefix (default loopfleet)
  LOG_LEVEL         worker only: fatal|error|warn|info|debug|trace|silent (default info)
  LOG_FORMAT        worker only: json|pretty (default json)
  GATEWAY_*         gateway only: port, host, JWT secret or JWKS URL, CORS, limits (docs/gateway.md)

Exit codes:
  0   success (send --follow: completed)
  1   failure or invalid configuration (send --follow: failed); an unreachable or failing
      Postgres or Redis prints [system.infrastructure] and its cause
  2   bad command line (unknown command, unknown or repeated option, malformed option value,
      missing argument, malformed session id)
  10  send --follow: waiting_for_input (answer with submit-input)
  11  send --follow: hit_round_limit
  12  send --follow: budget_exceeded
  13  send --follow: degraded (the model provider was unavailable)
  14  send --follow: cancelled
  130 send --follow: stopped following with Ctrl-C (the input keeps running)
`;
