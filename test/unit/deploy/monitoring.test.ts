import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { processMetrics, WorkerMetrics } from '../../../src/worker/worker-metrics.js';

/**
 * The monitoring the compose file ships (deploy/prometheus, deploy/grafana) is checked, not run (no
 * Docker engine here): Prometheus finds the workers where they serve `/metrics`, the files are
 * mounted where each service reads them, and every metric an alert or a dashboard panel queries is
 * one a worker exports — a renamed metric fails here, not silently on a dashboard.
 */
const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { volumes?: string[]; environment?: Record<string, string> }> };
const prometheus = parse(read('deploy/prometheus/prometheus.yml')) as {
  rule_files: string[];
  alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
  scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; type: string; port: number }[] }[];
};
const alerts = parse(read('deploy/prometheus/alerts.yml')) as { groups: { name: string; rules: { alert: string; expr: string; for?: string; annotations: { summary: string } }[] }[] };
const alertmanager = parse(read('deploy/prometheus/alertmanager.yml')) as {
  route: { receiver: string };
  receivers: { name: string; webhook_configs?: { url: string }[] }[];
};
const dashboard = JSON.parse(read('deploy/grafana/dashboards/loopfleet.json')) as {
  uid: string;
  templating: { list: { name: string; type: string; query: { query: string }; includeAll: boolean; allValue: string }[] };
  panels: { title: string; datasource: { uid: string }; targets: { expr: string; legendFormat?: string }[] }[];
};
const datasources = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as { datasources: { uid: string; url: string }[] };
const dashboardProviders = parse(read('deploy/grafana/provisioning/dashboards/loopfleet.yml')) as { providers: { options: { path: string } }[] };

/** `host:container` → container path, for the bind mounts of a service. */
const mounts = (service: string) => new Map((compose.services[service]?.volumes ?? []).map((volume) => [volume.split(':')[1], volume.split(':')[0]]));

/** Labels every series has besides its own: Prometheus's target labels and the worker's default one. */
const TARGET_LABELS = ['job', 'instance', 'queue'];

/**
 * Every series a worker's `/metrics` can show, with its label names: a histogram's as `_bucket` (with
 * `le`), `_sum` and `_count`; `up` is Prometheus's own, per target.
 */
function exportedSeries(): Map<string, string[]> {
  // Every source a started worker gives it (src/worker/start-worker.ts), the backlog and queue reads included.
  const metrics = new WorkerMetrics({
    queueName: 'q',
    concurrency: 1,
    isTool: () => false,
    events: () => ({ published: 0, dropped: 0, fenced: 0 }),
    backlog: async () => ({ pending: 0, sessionsWaiting: 0, oldestWaitSeconds: 0 }),
    queueJobs: async () => ({}),
  });
  const series = new Map<string, string[]>([['up', []]]);
  for (const registry of [metrics.registry, processMetrics()]) {
    for (const metric of registry.getMetricsAsArray()) {
      const { name, type, labelNames } = metric as unknown as { name: string; type: string; labelNames: string[] };
      if (type !== 'histogram') series.set(name, labelNames);
      else for (const suffix of ['_bucket', '_sum', '_count']) series.set(name + suffix, suffix === '_bucket' ? [...labelNames, 'le'] : labelNames);
    }
  }
  return series;
}

/** Grafana's range variables, as a query Prometheus receives has them filled in. */
const withGrafanaVariables = (expr: string) => expr.replace(/\$__(rate_interval|interval|range)/g, '5m');

/**
 * What is wrong with one query, by Prometheus's own grammar: it does not parse or reads no metric;
 * it reads a metric a worker does not export; a matcher, a `by`/`without` grouping or a `{{label}}`
 * of the legend names a label the metrics it reads do not have.
 */
function queryProblems(where: string, query: string, exported: Map<string, string[]>, legend = ''): string[] {
  const expr = withGrafanaVariables(query);
  const tree = parser.parse(expr);
  const text = (node: { from: number; to: number }) => expr.slice(node.from, node.to);
  const problems: string[] = [];
  const selectors: { from: number; to: number; labels: string[] }[] = [];
  const groupings: { from: number; to: number; labels: string[] }[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) problems.push(`${where}: does not parse at ${JSON.stringify(expr.slice(node.from, node.from + 20))}`);
      if (node.name === 'VectorSelector') {
        const identifier = node.node.getChild('Identifier');
        const metric = identifier === null ? '' : text(identifier);
        const known = exported.get(metric);
        if (known === undefined) problems.push(`${where}: no metric ${metric}`);
        const matched = (node.node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []).map((matcher) => text(matcher.getChild('LabelName')!));
        for (const label of matched) if (known !== undefined && !known.includes(label) && !TARGET_LABELS.includes(label)) problems.push(`${where}: ${metric} has no label ${label}`);
        selectors.push({ from: node.from, to: node.to, labels: [...(known ?? []), ...TARGET_LABELS] });
      }
      if (node.name === 'AggregateExpr') {
        const grouped = node.node.getChild('AggregateModifier')?.getChild('GroupingLabels')?.getChildren('LabelName') ?? [];
        groupings.push({ from: node.from, to: node.to, labels: grouped.map(text) });
      }
    },
  });
  if (selectors.length === 0) problems.push(`${where}: reads no metric`);
  for (const grouping of groupings) {
    const inside = new Set(selectors.filter((selector) => selector.from >= grouping.from && selector.to <= grouping.to).flatMap((selector) => selector.labels));
    for (const label of grouping.labels) if (!inside.has(label)) problems.push(`${where}: groups by ${label}, which the metrics it aggregates do not have`);
  }
  const all = new Set(selectors.flatMap((selector) => selector.labels));
  for (const match of legend.matchAll(/\{\{\s*(\w+)\s*\}\}/g)) if (!all.has(match[1]!)) problems.push(`${where}: the legend names ${match[1]!}, which no metric of the query has`);
  return problems;
}

describe('the shipped monitoring', () => {
  it('Prometheus scrapes every worker replica, by DNS, on the worker’s METRICS_PORT', () => {
    const [job] = prometheus.scrape_configs;
    expect(job).toMatchObject({ job_name: 'loopfleet-worker', dns_sd_configs: [{ names: ['worker'], type: 'A' }] });
    expect(String(job!.dns_sd_configs[0]!.port)).toBe(compose.services.worker!.environment!.METRICS_PORT);
  });

  it('the compose file mounts each file where its service reads it', () => {
    const prometheusMounts = mounts('prometheus');
    expect(prometheusMounts.get('/etc/prometheus/prometheus.yml')).toBe('./deploy/prometheus/prometheus.yml');
    for (const rules of prometheus.rule_files) expect(prometheusMounts.get(rules)).toBe(`./deploy/prometheus/${rules.split('/').pop()!}`);
    const grafanaMounts = mounts('grafana');
    expect(grafanaMounts.get('/etc/grafana/provisioning')).toBe('./deploy/grafana/provisioning');
    expect(grafanaMounts.get(dashboardProviders.providers[0]!.options.path)).toBe('./deploy/grafana/dashboards');
  });

  it('the dashboard reads the provisioned Prometheus data source', () => {
    expect(datasources.datasources[0]).toMatchObject({ url: 'http://prometheus:9090' });
    for (const panel of dashboard.panels) expect(panel.datasource.uid, panel.title).toBe(datasources.datasources[0]!.uid);
  });

  it('every alert has a summary; every query parses, and reads, groups by and names in its legend only metrics and labels a worker exports', () => {
    const exported = exportedSeries();
    const rules = alerts.groups.flatMap((group) => group.rules);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(rule.annotations.summary, rule.alert).toBeTruthy();
    const problems = [
      ...rules.flatMap((rule) => queryProblems(`alert ${rule.alert}`, rule.expr, exported)),
      ...dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => queryProblems(`panel ${panel.title}`, target.expr, exported, target.legendFormat))),
    ];
    expect(problems).toEqual([]);
  });

  it('Prometheus sends its alerts to the compose file’s Alertmanager, whose default receiver is a documented placeholder webhook', () => {
    const targets = prometheus.alerting.alertmanagers.flatMap((manager) => manager.static_configs.flatMap((config) => config.targets));
    expect(targets).toEqual(['alertmanager:9093']);
    expect(compose.services.alertmanager).toBeDefined();
    const volumes = compose.services.alertmanager!.volumes ?? [];
    expect(volumes).toContain('${ALERTMANAGER_CONFIG:-./deploy/prometheus/alertmanager.yml}:/etc/alertmanager/alertmanager.yml:ro');
    const receiver = alertmanager.receivers.find((candidate) => candidate.name === alertmanager.route.receiver);
    // `.invalid` never resolves: nothing leaves the machine until a real receiver is chosen.
    expect(receiver?.webhook_configs?.[0]?.url).toMatch(/^https?:\/\/[^/]+\.invalid\//);
    expect(read('deploy/prometheus/alertmanager.yml')).toContain('ALERTMANAGER_CONFIG=');
  });

  it('the dashboard has queue and instance variables, and every query of a worker metric filters by them', () => {
    const variables = new Map(dashboard.templating.list.map((variable) => [variable.name, variable]));
    for (const name of ['queue', 'instance']) {
      expect(variables.get(name), name).toMatchObject({ type: 'query', includeAll: true, allValue: '.*' });
      expect(variables.get(name)!.query.query).toMatch(new RegExp(`^label_values\\(loopfleet_\\w+.*, ${name}\\)$`));
    }
    const unfiltered: string[] = [];
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        // Every selector: the worker's own metrics carry `queue`; `up` and the process metrics only `instance`.
        for (const [, metric, matchers = ''] of expr.matchAll(/\b(loopfleet_\w+|process_\w+|nodejs_\w+|up)(?:\{([^}]*)\})?/g)) {
          const wanted = metric!.startsWith('loopfleet_') ? ['queue=~"$queue"', 'instance=~"$instance"'] : ['instance=~"$instance"'];
          if (!wanted.every((matcher) => matchers.includes(matcher))) unfiltered.push(`${panel.title}: ${metric!}`);
        }
      }
    }
    expect(unfiltered).toEqual([]);
  });
});
