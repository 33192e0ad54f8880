import { loadClientConfig, redactUrl } from '../../config/index.js';
import { runMigrations } from '../../store/postgres/migrate.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { parseCommandLine } from '../command-line.js';

/** `loopfleet migrate [--create-database] [--json]` */
export async function migrateCommand(args: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandLine({ args, options: { 'create-database': { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } });
  const config = loadClientConfig(io.env);
  const report = await runMigrations({ databaseUrl: config.databaseUrl, createDatabase: values['create-database'] });
  const database = redactUrl(config.databaseUrl);
  if (values.json) {
    io.stdout(`${JSON.stringify({ database, applied: report.applied, total: report.total })}\n`);
    return EXIT.ok;
  }
  io.stdout(
    report.applied.length === 0
      ? `${database}: up to date (${report.total} migrations)\n`
      : `${database}: applied ${report.applied.join(', ')} (${report.total} migrations)\n`,
  );
  return EXIT.ok;
}
