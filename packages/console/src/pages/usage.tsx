import type { Project, ProjectUsage, RequestRate } from '@gatehouse/contract';
import type { Platform } from '../platform.js';
import { Loaded, Section, useLoad } from '../ui.js';

function lastMonths(count: number): string[] {
  const now = new Date();
  const months: string[] = [];
  for (let i = count - 1; i >= 0; i--) {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    months.push(d.toISOString().slice(0, 7));
  }
  return months;
}

const COLORS = { development: '#64748b', production: '#2563eb' } as const;

export function UsageTab({ platform, project }: { platform: Platform; project: Project }) {
  const months = lastMonths(6);
  const usage = useLoad(() => Promise.all(months.map((m) => platform.projects.usage(project.id, m))), [project.id]);
  const rate = useLoad(() => platform.projects.requests(project.id), [project.id]);
  return (
    <>
      <Section title="Monthly active users" actions={<button type="button" onClick={usage.reload}>Refresh</button>}>
        <p className="muted">Users who signed in or refreshed a session in the UTC month. Only production is billable.</p>
        <Loaded state={usage} what="usage">
          {(monthly) => <MauChart usage={monthly} />}
        </Loaded>
      </Section>
      <Section title="Requests per minute, last hour" actions={<button type="button" onClick={rate.reload}>Refresh</button>}>
        <p className="muted">Requests authenticated to each environment, per minute, as counted by this server node.</p>
        <Loaded state={rate} what="requests">
          {(counted) => <RateChart rate={counted} />}
        </Loaded>
      </Section>
    </>
  );
}

function Legend() {
  return (
    <p className="legend">
      <span>
        <i style={{ background: COLORS.development }} /> Development
      </span>
      <span>
        <i style={{ background: COLORS.production }} /> Production (billable)
      </span>
    </p>
  );
}

function MauChart({ usage }: { usage: ProjectUsage[] }) {
  const width = 640;
  const height = 220;
  const pad = { left: 40, bottom: 28, top: 12 };
  const value = (u: ProjectUsage, type: 'development' | 'production') => u.environments.find((e) => e.type === type)?.monthlyActiveUsers ?? 0;
  const max = Math.max(1, ...usage.flatMap((u) => [value(u, 'development'), value(u, 'production')]));
  const slot = (width - pad.left) / usage.length;
  const bar = Math.min(28, slot / 3);
  const y = (v: number) => height - pad.bottom - (v / max) * (height - pad.bottom - pad.top);
  const summary = usage.map((u) => `${u.month}: ${value(u, 'development')} development, ${value(u, 'production')} production`).join('; ');
  return (
    <figure>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Monthly active users. ${summary}`} className="chart" data-chart="mau">
        <line x1={pad.left} x2={width} y1={y(0)} y2={y(0)} className="axis" />
        <text x={pad.left - 6} y={y(max) + 4} textAnchor="end" className="tick">
          {max}
        </text>
        <text x={pad.left - 6} y={y(0) + 4} textAnchor="end" className="tick">
          0
        </text>
        {usage.map((u, i) => {
          const x = pad.left + i * slot + slot / 2;
          return (
            <g key={u.month}>
              {(['development', 'production'] as const).map((type, j) => {
                const v = value(u, type);
                return (
                  <g key={type}>
                    <rect
                      x={x - bar + j * bar}
                      y={y(v)}
                      width={bar - 2}
                      height={y(0) - y(v)}
                      fill={COLORS[type]}
                      data-month={u.month}
                      data-type={type}
                      data-value={v}
                    >
                      <title>{`${u.month} ${type}: ${v}`}</title>
                    </rect>
                    {v > 0 && (
                      <text x={x - bar + j * bar + (bar - 2) / 2} y={y(v) - 3} textAnchor="middle" className="tick">
                        {v}
                      </text>
                    )}
                  </g>
                );
              })}
              <text x={x} y={height - 8} textAnchor="middle" className="tick">
                {u.month}
              </text>
            </g>
          );
        })}
      </svg>
      <Legend />
    </figure>
  );
}

function RateChart({ rate }: { rate: RequestRate }) {
  const width = 640;
  const height = 200;
  const pad = { left: 40, bottom: 24, top: 12 };
  const series = rate.environments;
  const minutes = series[0]?.perMinute.length ?? 60;
  const max = Math.max(1, ...series.flatMap((s) => s.perMinute.map((p) => p.requests)));
  const x = (i: number) => pad.left + (i / Math.max(1, minutes - 1)) * (width - pad.left - 8);
  const y = (v: number) => height - pad.bottom - (v / max) * (height - pad.bottom - pad.top);
  const total = (s: (typeof series)[number]) => s.perMinute.reduce((n, p) => n + p.requests, 0);
  return (
    <figure>
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        className="chart"
        data-chart="requests"
        aria-label={`Requests per minute over the last hour. ${series.map((s) => `${s.type}: ${total(s)} requests in all`).join('; ')}`}
      >
        <line x1={pad.left} x2={width} y1={y(0)} y2={y(0)} className="axis" />
        <text x={pad.left - 6} y={y(max) + 4} textAnchor="end" className="tick">
          {max}
        </text>
        <text x={pad.left - 6} y={y(0) + 4} textAnchor="end" className="tick">
          0
        </text>
        <text x={pad.left} y={height - 6} className="tick">
          60 min ago
        </text>
        <text x={width - 8} y={height - 6} textAnchor="end" className="tick">
          now
        </text>
        {series.map((s) => (
          <polyline
            key={s.id}
            fill="none"
            stroke={COLORS[s.type]}
            strokeWidth={2}
            points={s.perMinute.map((p, i) => `${x(i)},${y(p.requests)}`).join(' ')}
          />
        ))}
      </svg>
      <Legend />
    </figure>
  );
}
