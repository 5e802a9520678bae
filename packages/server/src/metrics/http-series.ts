import type { MetricValueWithName, Registry } from 'prom-client';

type Sample = MetricValueWithName<string>;

/** Seconds; from a fast cache hit to a slow password hash or a stalled database. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * One route's requests: plain numbers, counted on every answer. prom-client's own counters and
 * histograms hash their labels at each observation, which cost GET /v1/me more than the 2 % budget
 * (bench/metrics.bench.ts); these are turned into samples only when scraped.
 */
export class RouteSeries {
  /** Per bucket, not cumulative; the last slot is +Inf. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
  sum = 0;
  count = 0;
  readonly byStatus = new Map<number, number>();

  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  observe(status: number, seconds: number): void {
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    this.buckets[i]! += 1;
    this.sum += seconds;
    this.count += 1;
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
  }
}

/** Registers `gatehouse_http_requests_total` and `gatehouse_http_request_duration_seconds`, read from the series. */
export function registerHttpFamilies(registry: Registry, series: () => Iterable<RouteSeries>): void {
  const requests = 'gatehouse_http_requests_total';
  const durations = 'gatehouse_http_request_duration_seconds';
  registry.registerMetric({
    name: requests,
    get: async () => {
      const values: Sample[] = [];
      for (const s of series()) {
        for (const [status, count] of s.byStatus) values.push({ labels: { method: s.method, route: s.route, status }, value: count });
      }
      return {
        name: requests,
        help: 'HTTP requests answered, by method, route template and status',
        type: 'counter',
        aggregator: 'sum',
        values,
      };
    },
  } as never);
  registry.registerMetric({
    name: durations,
    get: async () => {
      const values: Sample[] = [];
      for (const s of series()) {
        // A route not requested yet has no samples (a series per route would be thousands of lines).
        if (s.count === 0) continue;
        const labels = { method: s.method, route: s.route };
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += s.buckets[i]!;
          values.push({ metricName: `${durations}_bucket`, labels: { ...labels, le }, value: cumulative });
        });
        values.push({ metricName: `${durations}_bucket`, labels: { ...labels, le: '+Inf' }, value: s.count });
        values.push({ metricName: `${durations}_sum`, labels, value: s.sum });
        values.push({ metricName: `${durations}_count`, labels, value: s.count });
      }
      return {
        name: durations,
        help: 'Time from the request to its answer, by method and route template',
        type: 'histogram',
        aggregator: 'sum',
        values,
      };
    },
  } as never);
}
