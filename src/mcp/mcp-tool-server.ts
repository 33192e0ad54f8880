import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { InfrastructureError, thrownText } from '../core/errors/index.js';
import { createSchemaCompiler, validateToolDefinition, type AnyToolDefinition, type InDoubtPolicy, type ToolContext } from '../core/tools/index.js';
import { SecretScrubber } from '../observability/redaction.js';
import { connectionLoss } from './connection-loss.js';
import type { ResolvedMcpServer } from './mcp-server-spec.js';
import { mcpToolDefinition } from './mcp-tool-definition.js';
import { mcpToolName } from './mcp-tool-name.js';
import { ToolResultWithImages } from '../core/tools/tool-result-images.js';
import { mcpResultImages, mcpResultText, type McpCallResult } from './mcp-tool-result.js';
import { createMcpTransport, mcpSecrets, transportPid } from './mcp-transport.js';
import { DEFAULT_RESTART_BACKOFF, RestartBackoff, type RestartBackoffOptions } from './restart-backoff.js';
import { waitUntil } from './wait-until.js';

/** The `_meta` key that carries a call's idempotency key (`<sessionId>:<toolCallId>`) to the server. */
export const IDEMPOTENCY_META_KEY = 'loopfleet/idempotencyKey';

/** Where a server stands: `absent` is an optional server that could not start (see startMcpServers). */
export type McpServerState = 'starting' | 'up' | 'restarting' | 'absent' | 'closed';

/** What the status hook hears on every change: `up` is the gauge's value. */
export interface McpServerStatus {
  server: string;
  state: McpServerState;
  up: boolean;
}

/** The logging this module does; a pino logger fits. Errors go under `err`, already scrubbed of the spec's secrets. */
export interface McpLogger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface McpToolServerOptions {
  logger: McpLogger;
  /** Called on every state change (for the `loopfleet_mcp_server_up{server}` gauge). Must not throw. */
  onStatus?: (status: McpServerStatus) => void;
  /** Restarts after an exit. Default: 500 ms doubling to 30 s, reset after 60 s up. */
  backoff?: Partial<RestartBackoffOptions>;
}

/** Listens to a server's tool list: called with the new definitions after each change. */
export type McpToolsListener = (tools: readonly AnyToolDefinition[]) => void;

interface Connection {
  client: Client;
  transport: Transport;
}

/**
 * How much later than the tool's timeout this module's own limits (the SDK's request timeout, the wait
 * for a restart) fire: they are a backstop, so the loop's timer fires first and the model sees
 * `tool.timeout`.
 */
const BACKSTOP_GRACE_MS = 1_000;

/** Pages of `tools/list` read at most, so a server that keeps answering with a cursor cannot hold start-up. */
const MAX_LIST_PAGES = 100;

/**
 * One MCP server and the loop tools it offers (docs/mcp.md). `start()` connects and lists the tools;
 * they are listed again on `notifications/tools/list_changed` and after each restart, and `onChange`
 * hears of it. A server that exits is started again with exponential backoff; its tools stay listed
 * meanwhile, and their calls wait for it (bounded by their timeout and signal). A call the exit cut
 * short is sent again (same idempotency key) when its policy is `retry`, and fails as "unknown" when
 * it is `fail`.
 */
export class McpToolServer {
  readonly name: string;
  readonly #spec: ResolvedMcpServer;
  readonly #logger: McpLogger;
  readonly #onStatus: (status: McpServerStatus) => void;
  readonly #backoff: RestartBackoff;
  readonly #scrubber: SecretScrubber;
  readonly #listeners = new Set<McpToolsListener>();
  #connection: Connection | null = null;
  /** Resolves with the next live connection, or null once closed. Replaced when a connection is lost. */
  #ready = settleable<Connection | null>();
  #state: McpServerState = 'starting';
  #tools: readonly AnyToolDefinition[] = [];
  #toolsSignature = '';
  #restartTimer: NodeJS.Timeout | null = null;
  #listRequests = 0;

  constructor(spec: ResolvedMcpServer, options: McpToolServerOptions) {
    this.name = spec.name;
    this.#spec = spec;
    this.#logger = options.logger;
    this.#onStatus = options.onStatus ?? (() => undefined);
    this.#backoff = new RestartBackoff({ ...DEFAULT_RESTART_BACKOFF, ...options.backoff });
    this.#scrubber = new SecretScrubber(mcpSecrets(spec));
  }

  /**
   * Connects and lists the tools. Rejects with `InfrastructureError` naming the server when it cannot
   * (the process does not start or answer, the URL refuses): the message never holds the spec's
   * `env` or `headers` values. The server is then closed; nothing restarts it.
   */
  async start(): Promise<void> {
    this.#setState('starting');
    try {
      await this.#connect();
    } catch (error) {
      this.#ready.settle(null);
      this.#setState('closed');
      const reason = this.#scrubber.text(thrownText(error) ?? 'unknown error');
      throw new InfrastructureError(`MCP server "${this.name}" cannot start: ${reason}`, { cause: this.#scrubber.error(error), details: { server: this.name } });
    }
  }

  /** The current tools, as loop definitions named `<server>__<tool>`. */
  tools(): readonly AnyToolDefinition[] {
    return this.#tools;
  }

  /** Where the server stands now. */
  state(): McpServerState {
    return this.#state;
  }

  /** Calls `listener` after every change of the tool list; returns a function that stops it. */
  onChange(listener: McpToolsListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Stops the server (a stdio process is ended) and any restart. Calls waiting for it fail. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#state === 'closed' || this.#state === 'absent') return;
    this.#setState('closed');
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    this.#ready.settle(null);
    const connection = this.#connection;
    this.#connection = null;
    if (connection !== null) await closeQuietly(connection.client);
  }

  /** Marks an optional server that could not start: no tools, never restarted. */
  markAbsent(): void {
    this.#setState('absent');
  }

  async #connect(): Promise<void> {
    const client = new Client({ name: 'loopfleet', version: '1' });
    const transport = createMcpTransport(this.#spec);
    const connection: Connection = { client, transport };
    client.onclose = () => this.#lost(connection, 'the connection closed');
    client.onerror = (error) => this.#logger.debug({ server: this.name, err: this.#scrubber.error(error) }, 'MCP transport error');
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.#refreshTools(connection));
    let tools: Tool[];
    try {
      await client.connect(transport, { timeout: this.#spec.timeoutMs });
      tools = await this.#listTools(client);
    } catch (error) {
      await closeQuietly(client);
      throw error;
    }
    if (this.#state === 'closed') return void (await closeQuietly(client));
    this.#connection = connection;
    this.#backoff.up(Date.now());
    this.#setTools(tools);
    this.#setState('up');
    this.#logger.info({ server: this.name, pid: transportPid(transport), tools: this.#tools.length }, 'MCP server up');
    this.#ready.settle(connection);
  }

  async #listTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const listed = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.#spec.timeoutMs });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  async #refreshTools(connection: Connection): Promise<void> {
    const request = ++this.#listRequests;
    try {
      const tools = await this.#listTools(connection.client);
      // A later list (or a new connection) answers for a later state of the server.
      if (request === this.#listRequests && this.#connection === connection) this.#setTools(tools);
    } catch (error) {
      this.#logger.warn({ server: this.name, err: this.#scrubber.error(error) }, 'MCP server: listing its tools again failed; the old list stays');
    }
  }

  #setTools(listed: readonly Tool[]): void {
    const signature = JSON.stringify(listed);
    if (signature === this.#toolsSignature) return;
    const first = this.#toolsSignature === '';
    this.#toolsSignature = signature;
    this.#tools = Object.freeze(this.#definitions(listed));
    if (!first) this.#logger.info({ server: this.name, tools: this.#tools.map((tool) => tool.name) }, 'MCP server: tools changed');
    for (const listener of this.#listeners) {
      try {
        listener(this.#tools);
      } catch (error) {
        this.#logger.warn({ server: this.name, err: error }, 'MCP tools listener threw');
      }
    }
  }

  /** Loop definitions of the listed tools; a tool whose name or schema the loop cannot take is left out with a warning. */
  #definitions(listed: readonly Tool[]): AnyToolDefinition[] {
    const compiler = createSchemaCompiler();
    const definitions: AnyToolDefinition[] = [];
    for (const tool of listed) {
      const name = mcpToolName(this.name, tool.name);
      if (name === null) {
        this.#logger.warn({ server: this.name, tool: tool.name }, 'MCP tool left out: "<server>__<tool>" is not 1–64 characters of [A-Za-z0-9_-]');
        continue;
      }
      const definition = mcpToolDefinition(name, tool, this.#spec.timeoutMs, (...call) => this.#call(...call));
      try {
        validateToolDefinition(definition, { compiler });
        definitions.push(definition);
      } catch (error) {
        this.#logger.warn({ server: this.name, tool: tool.name, err: error }, 'MCP tool left out: the loop cannot take its definition');
      }
    }
    return definitions;
  }

  /**
   * One call of `tool`, on the live connection (waiting for a restart when there is none). A call
   * the connection's loss cut short is sent again under `retry`, and fails under `fail`; the wait for
   * the server is bounded by the tool's timeout and the call's signal.
   */
  async #call(tool: Tool, policy: InDoubtPolicy, args: Record<string, unknown>, ctx: ToolContext): Promise<string | ToolResultWithImages> {
    const deadline = Date.now() + this.#spec.timeoutMs + BACKSTOP_GRACE_MS;
    for (;;) {
      const connection = await this.#live(ctx.signal, deadline);
      try {
        const result = await connection.client.callTool(
          { name: tool.name, arguments: args, _meta: { [IDEMPOTENCY_META_KEY]: ctx.idempotencyKey } },
          undefined,
          { signal: ctx.signal, timeout: Math.max(1, deadline - Date.now()) },
        );
        return this.#output(tool, result as McpCallResult);
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        const loss = connectionLoss(error, this.#connection === connection);
        if (loss === null) throw error;
        this.#lost(connection, `a call to "${tool.name}" failed: ${this.#scrubber.text(thrownText(error) ?? 'unknown error')}`);
        if (loss === 'in_doubt' && policy === 'fail') {
          throw new Error(`MCP server "${this.name}" exited during the call to "${tool.name}"; whether the call took effect is unknown`, { cause: error });
        }
        this.#logger.info({ server: this.name, tool: tool.name, loss }, 'MCP call cut short by a lost connection: calling again once the server is back');
      }
    }
  }

  #output(tool: Tool, result: McpCallResult): string | ToolResultWithImages {
    const text = mcpResultText(result);
    if (result.isError === true) throw new Error(text === '' ? `MCP tool "${tool.name}" reported an error` : text);
    const images = mcpResultImages(result);
    return images.length === 0 ? text : new ToolResultWithImages(text, images);
  }

  /** The live connection, or the next one: rejects at `deadline`, on abort, or once the server is closed. */
  async #live(signal: AbortSignal, deadline: number): Promise<Connection> {
    if (this.#connection !== null) return this.#connection;
    const timedOut = () => new Error(`MCP server "${this.name}" is restarting and was not back within the call's ${this.#spec.timeoutMs} ms`);
    const connection = await waitUntil(this.#ready.promise, signal, deadline, timedOut);
    if (connection === null) throw new Error(`MCP server "${this.name}" is ${this.#state === 'absent' ? 'absent' : 'closed'}`);
    return connection;
  }

  /** `connection` is gone (its process exited, its session was lost): start the server again after a backoff. */
  #lost(connection: Connection, why: string): void {
    if (this.#connection !== connection) return;
    this.#connection = null;
    this.#ready = settleable();
    void closeQuietly(connection.client);
    this.#setState('restarting');
    this.#scheduleRestart(why);
  }

  #scheduleRestart(why: string): void {
    if (this.#state === 'closed') return;
    const delayMs = this.#backoff.nextDelay(Date.now());
    this.#logger.warn({ server: this.name, delayMs, reason: why }, 'MCP server down: restarting it');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = null;
      void this.#restart();
    }, delayMs);
  }

  async #restart(): Promise<void> {
    try {
      await this.#connect();
    } catch (error) {
      this.#scheduleRestart(`restart failed: ${this.#scrubber.text(thrownText(error) ?? 'unknown error')}`);
    }
  }

  #setState(state: McpServerState): void {
    if (this.#state === state && state !== 'starting') return;
    this.#state = state;
    try {
      this.#onStatus({ server: this.name, state, up: state === 'up' });
    } catch (error) {
      this.#logger.warn({ server: this.name, err: error }, 'MCP status hook threw');
    }
  }
}

/** A promise with its resolver, settled at most once. */
function settleable<T>(): { promise: Promise<T>; settle(value: T): void } {
  let settle: (value: T) => void = () => undefined;
  const promise = new Promise<T>((resolve) => {
    settle = resolve;
  });
  return { promise, settle };
}

async function closeQuietly(client: Client): Promise<void> {
  try {
    await client.close();
  } catch {
    // Closing a connection that already failed: nothing left to do.
  }
}
