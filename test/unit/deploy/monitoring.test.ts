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
  scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; type: string; port: number }[] }[];
};
const alerts = parse(read('deploy/prometheus/alerts.yml')) as { groups: { name: string; rules: { alert: string; expr: string; for?: string; annotations: { summary: string } }[] }[] };
const dashboard = JSON.parse(read('deploy/grafana/dashboards/loopfleet.json')) as { uid: string; panels: { title: string; datasource: { uid: string }; targets: { expr: string }[] }[] };
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
  // Every source a started worker gives it (src/worker/start-worker.ts), the backlog read included.
  const metrics = new WorkerMetrics({ queueName: 'q', concurrency: 1, isTool: () => false, events: () => ({ published: 0, dropped: 0, fenced: 0 }), backlog: async () => ({ pending: 0, oldestSeconds: 0 }) });
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

/** What a PromQL expression reads, by Prometheus's own grammar: each selector's metric and label names; null when it does not parse. */
function selectors(expr: string): { metric: string; labels: string[] }[] | null {
  const tree = parser.parse(expr);
  let valid = true;
  const found: { metric: string; labels: string[] }[] = [];
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) valid = false;
      if (node.name !== 'VectorSelector') return;
      const metric = node.node.getChild('Identifier');
      const labels = node.node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? [];
      found.push({
        metric: metric === null ? '' : expr.slice(metric.from, metric.to),
        labels: labels.map((matcher) => {
          const name = matcher.getChild('LabelName')!;
          return expr.slice(name.from, name.to);
        }),
      });
    },
  });
  return valid ? found : null;
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

  it('every alert has a summary; every query parses, and reads only metrics and labels a worker exports', () => {
    const exported = exportedSeries();
    const rules = alerts.groups.flatMap((group) => group.rules);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(rule.annotations.summary, rule.alert).toBeTruthy();
    const queries = [
      ...rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
      ...dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ where: `panel ${panel.title}`, expr: target.expr }))),
    ];
    const problems: string[] = [];
    for (const { where, expr } of queries) {
      const read = selectors(expr);
      if (read === null || read.length === 0) problems.push(`${where}: does not parse, or reads no metric`);
      for (const { metric, labels } of read ?? []) {
        const known = exported.get(metric);
        if (known === undefined) problems.push(`${where}: no metric ${metric}`);
        else for (const label of labels) if (!known.includes(label) && !TARGET_LABELS.includes(label)) problems.push(`${where}: ${metric} has no label ${label}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
