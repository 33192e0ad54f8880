import { loadConfig, loadGatewayConfig } from '../../config/index.js';
import { loggerFromConfig } from '../../observability/logger.js';
import { startTracing } from '../../observability/tracing/start-tracing.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine, parseIntegerOption } from '../command-line.js';

/**
 * `loopfleet gateway [--port N] [--host H]`: serves the HTTP/SSE API and the viewer until
 * SIGTERM/SIGINT (docs/gateway.md). The flags win over `GATEWAY_PORT` and `GATEWAY_HOST`. Fastify is
 * imported here, lazily, so the other commands never load it.
 */
export async function gatewayCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine({ args, options: { port: { type: 'string' }, host: { type: 'string' }, json: { type: 'boolean', default: false } } });
  const env = Object.assign({}, io.env);
  if (values.port !== undefined) env.GATEWAY_PORT = String(parseIntegerOption('port', values.port, { min: 0, max: 65_535 }));
  if (values.host !== undefined) env.GATEWAY_HOST = values.host;
  const { client, gateway } = loadGatewayConfig(env);
  const logger = loggerFromConfig(loadConfig({ LOG_LEVEL: env.LOG_LEVEL, LOG_FORMAT: env.LOG_FORMAT, LOG_CONTENT: env.LOG_CONTENT }));
  // Spans of the adds the gateway makes (docs/tracing.md); off, and nothing loaded, without OTEL_TRACES_EXPORTER.
  const tracing = await startTracing(env, { serviceName: 'loopfleet-gateway' });
  const { startGateway } = await import('../../gateway/start-gateway.js');
  const running = await startGateway(client, gateway, logger).catch(async (error: unknown) => {
    await tracing.shutdown();
    throw error;
  });
  io.stdout(values.json ? `${JSON.stringify({ url: running.url })}\n` : `gateway listening on ${running.url}\n`);
  return new Promise<number>((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'gateway shutting down');
      running.close().then(() => tracing.shutdown()).then(
        () => resolve(EXIT.ok),
        (error: unknown) => {
          logger.error({ err: error }, 'gateway close failed');
          resolve(EXIT.failure);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
}
