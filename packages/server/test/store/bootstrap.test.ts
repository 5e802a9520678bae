import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDefaultProject } from '../../src/bootstrap.js';
import { TenancyService } from '../../src/tenancy/service.js';
import { openTestStore, testDb, type TestStore } from '../helpers/store.js';

describe(`first start (${testDb()})`, () => {
  let store: TestStore;
  beforeAll(async () => {
    store = await openTestStore();
  });
  afterAll(() => store.close());

  it('creates exactly one Default project when several nodes start on an empty database at once', async () => {
    const results = await Promise.all(Array.from({ length: 4 }, () => ensureDefaultProject(store)));
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    expect(await new TenancyService(store).countProjects()).toBe(1);
    expect(await ensureDefaultProject(store)).toBeNull();
  });
});
