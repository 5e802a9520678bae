import type { EnvironmentId } from '../lib/ids.js';
import type { Store } from '../db/index.js';
import type { TenancyService } from '../tenancy/service.js';
import * as q from './queries.js';

/** The UTC calendar month of a timestamp, as YYYY-MM. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
export function isMonth(value: string): boolean {
  return MONTH.test(value);
}

/** How many (environment, user, month) triples a node remembers having recorded. */
const REMEMBERED_MAX = 100_000;

/**
 * Monthly active users. A user counts once per UTC month after a sign-in (any method) or a refresh:
 * one upsert per user per month. Each node remembers what it already recorded this month, so a
 * user refreshing every five minutes costs one write a month per node, not one per refresh.
 */
export class UsageService {
  private remembered = new Set<string>();
  private rememberedMonth = '';

  constructor(
    private readonly store: Store,
    private readonly tenancy: TenancyService,
    private readonly now: () => number,
  ) {}

  async recordActivity(environmentId: EnvironmentId, userId: string): Promise<void> {
    const now = this.now();
    const month = utcMonth(now);
    if (month !== this.rememberedMonth || this.remembered.size >= REMEMBERED_MAX) {
      this.remembered = new Set();
      this.rememberedMonth = month;
    }
    const key = `${environmentId}/${userId}`;
    if (this.remembered.has(key)) return;
    await q.recordActiveUser(this.store.db, environmentId, month, userId, now);
    this.remembered.add(key);
  }

  async projectUsage(projectId: string, month: string) {
    const { environments } = await this.tenancy.getProject(projectId);
    const rows = await Promise.all(
      environments.map(async (environment) => ({
        id: environment.id,
        type: environment.type,
        monthlyActiveUsers: await q.countActiveUsers(this.store.db, environment.id, month),
        billable: environment.type === 'production',
      })),
    );
    return {
      projectId,
      month,
      environments: rows,
      billableMonthlyActiveUsers: rows.filter((r) => r.billable).reduce((sum, r) => sum + r.monthlyActiveUsers, 0),
    };
  }
}
