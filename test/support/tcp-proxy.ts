import net from 'node:net';

/** One client connection through the proxy and its upstream. */
interface Link {
  client: net.Socket;
  upstream: net.Socket;
  /** Forwards nothing, either way, while true; neither side is closed. */
  silent: boolean;
}

/**
 * A TCP proxy on loopback in front of a server (Postgres) that can make connections go silent: stop
 * forwarding bytes both ways without closing either side, as a network partition or a frozen host
 * does. Connections opened later flow normally.
 */
export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1). */
  readonly port: number;
  /** `url` (a server's connection string) pointed at the proxy instead. */
  via(url: string): string;
  /** Silences every connection open now. Returns how many. */
  silenceOpen(): number;
  /**
   * Silences a connection as soon as its client sends a chunk `matches` accepts, dropping that
   * chunk (it never reaches the server). Applies to connections open now and later.
   */
  silenceWhen(matches: (chunk: Buffer) => boolean): void;
  /** Connections silenced so far that are still open. */
  silenced(): number;
  /** Closes every open connection abruptly, both sides (a reset), as a dropped network does. */
  cut(): void;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** Starts a proxy to `target` (`host:port` of the server). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>();
  let trigger: ((chunk: Buffer) => boolean) | undefined;

  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const link: Link = { client, upstream, silent: false };
    links.add(link);
    client.on('data', (chunk: Buffer) => {
      if (!link.silent && trigger?.(chunk) === true) link.silent = true;
      if (!link.silent) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!link.silent) client.write(chunk);
    });
    // Either side closing closes the other (a silent link too: whoever gave up on it frees the
    // server's backend); errors are the other side's resets.
    const drop = (): void => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', drop);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    via: (url) => {
      const proxied = new URL(url);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(port);
      return proxied.toString();
    },
    silenceOpen: () => {
      for (const link of links) link.silent = true;
      return links.size;
    },
    silenceWhen: (matches) => {
      trigger = matches;
    },
    silenced: () => [...links].filter((link) => link.silent).length,
    cut: () => {
      for (const link of links) {
        link.client.resetAndDestroy();
        link.upstream.destroy();
      }
    },
    close: async () => {
      for (const link of links) {
        link.client.destroy();
        link.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Whether a chunk a Postgres client sends starts a statement: a simple query (`Q`) or a Parse (`P`). */
export function startsStatement(chunk: Buffer): boolean {
  return chunk[0] === 0x51 || chunk[0] === 0x50;
}

/** The default port of a connection string's scheme, for a URL that leaves it out. */
const DEFAULT_PORTS: Record<string, number> = { 'postgres:': 5432, 'postgresql:': 5432, 'redis:': 6379, 'rediss:': 6379 };

/** Starts a proxy to the server a connection string (Postgres, Redis) names; `via(url)` then points at it. */
export async function startTcpProxyTo(url: string): Promise<TcpProxy> {
  const server = new URL(url);
  const port = server.port === '' ? DEFAULT_PORTS[server.protocol] : Number(server.port);
  if (port === undefined) throw new Error(`no default port known for ${server.protocol}`);
  return startTcpProxy({ host: server.hostname, port });
}
