import type { TenantSettingsPatch, TenantSettingsRecord } from '../../core/ports/tenant-admin.js';
import { withStore, type StoreClient } from '../connect.js';
import { MAX_CONCURRENT_INPUTS, TENANT_WEIGHT } from '../../store/tenants/tenant-settings-options.js';
import { EXIT, type CliIo } from '../cli-io.js';
import { CliUsageError, parseCommandLine, parseIntegerOption } from '../command-line.js';
import { formatTable } from '../format-table.js';

const USAGE = `loopfleet tenant set <tenant> [--weight <n>] [--max-concurrent <n>|none] [--max-rate <n>|none] [--json]
       loopfleet tenant get <tenant> [--json]
       loopfleet tenant list [--json]
       loopfleet tenant delete <tenant> [--json]`;

const HEADER = ['TENANT', 'WEIGHT', 'MAX CONCURRENT', 'MAX INPUTS/S', 'UPDATED'];

/**
 * `loopfleet tenant set|get|list|delete`: per-tenant dispatch settings. `set` changes only the options
 * given (`none` removes a cap); `get` prints the defaults for a tenant without settings.
 */
export async function tenantCommand(args: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'set':
      return setTenant(rest, io);
    case 'get':
      return getTenant(rest, io);
    case 'list':
      return listTenants(rest, io);
    case 'delete':
      return deleteTenant(rest, io);
    default:
      io.stderr(`loopfleet tenant: expected set, get, list or delete${action === undefined ? '' : `, got "${action}"`}\nusage: ${USAGE}\n`);
      return EXIT.usage;
  }
}

async function setTenant(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    allowPositionals: true,
    options: { weight: { type: 'string' }, 'max-concurrent': { type: 'string' }, 'max-rate': { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const tenant = onlyTenant(positionals, 'set');
  const patch: TenantSettingsPatch = {};
  if (values.weight !== undefined) patch.weight = parseIntegerOption('weight', values.weight, TENANT_WEIGHT);
  const concurrent = values['max-concurrent'];
  if (concurrent !== undefined) patch.maxConcurrentInputs = concurrent === 'none' ? null : parseIntegerOption('max-concurrent', concurrent, { min: 1, max: MAX_CONCURRENT_INPUTS });
  const rate = values['max-rate'];
  if (rate !== undefined) patch.maxInputsPerSecond = rate === 'none' ? null : parseRate(rate);
  if (Object.keys(patch).length === 0) throw new CliUsageError('tenant set needs at least one of --weight, --max-concurrent, --max-rate');
  return withStore(io, async (queue: StoreClient) => {
    const record = await queue.tenants.set(tenant, patch);
    io.stdout(values.json ? `${JSON.stringify(record)}\n` : formatTenants([record]));
    return EXIT.ok;
  });
}

async function getTenant(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const tenant = onlyTenant(positionals, 'get');
  return withStore(io, async (queue: StoreClient) => {
    const record = await queue.tenants.get(tenant);
    if (values.json) io.stdout(`${JSON.stringify(record ?? { tenant, weight: TENANT_WEIGHT.default, maxConcurrentInputs: null, maxInputsPerSecond: null, stored: false })}\n`);
    else io.stdout(record === null ? `${tenant}: no settings of its own (weight ${TENANT_WEIGHT.default}, no caps)\n` : formatTenants([record]));
    return EXIT.ok;
  });
}

async function listTenants(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  if (positionals.length > 0) throw new CliUsageError(`tenant list takes no arguments, got "${positionals[0]!}"`);
  return withStore(io, async (queue: StoreClient) => {
    const records: TenantSettingsRecord[] = [];
    for (let after: string | undefined; ; ) {
      const page = await queue.tenants.list(after === undefined ? {} : { after });
      records.push(...page);
      if (page.length < 1000) break;
      after = page.at(-1)!.tenant;
    }
    if (values.json) for (const record of records) io.stdout(`${JSON.stringify(record)}\n`);
    else io.stdout(records.length === 0 ? 'no tenant has settings of its own\n' : formatTenants(records));
    return EXIT.ok;
  });
}

async function deleteTenant(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine({ args, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const tenant = onlyTenant(positionals, 'delete');
  return withStore(io, async (queue: StoreClient) => {
    if (!(await queue.tenants.delete(tenant))) {
      io.stderr(`loopfleet tenant: ${tenant} has no settings\n`);
      return EXIT.notFound;
    }
    io.stdout(values.json ? `${JSON.stringify({ tenant, deleted: true })}\n` : `deleted the settings of ${tenant}\n`);
    return EXIT.ok;
  });
}

/** Settings as a table; a missing cap shows as `-`. */
export function formatTenants(records: readonly TenantSettingsRecord[]): string {
  return formatTable(HEADER, records.map((r) => [r.tenant, String(r.weight), r.maxConcurrentInputs === null ? '-' : String(r.maxConcurrentInputs), r.maxInputsPerSecond === null ? '-' : String(r.maxInputsPerSecond), r.updatedAt.toISOString()]));
}

function parseRate(raw: string): number {
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (value > 0) return value;
  throw new CliUsageError(`--max-rate must be a number above 0 (inputs per second) or none; got ${JSON.stringify(raw)}`);
}

function onlyTenant(positionals: string[], action: string): string {
  const [tenant, ...extra] = positionals;
  if (tenant === undefined || extra.length > 0) throw new CliUsageError(`tenant ${action} expects one tenant`);
  return tenant;
}

