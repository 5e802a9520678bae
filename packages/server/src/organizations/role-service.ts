import { isUniqueViolation, type Store } from '../db/index.js';
import { inTransaction } from '../db/changes.js';
import { apiError, notFound } from '../lib/errors.js';
import type { Environment } from '../tenancy/settings.js';
import { trimmedName } from './access.js';
import * as roles from './role-queries.js';
import { isSystemRole, SYSTEM_ROLES, validPermissions, validRoleKey } from './roles.js';
import { roleView, type RoleView } from './views.js';

export interface RoleServiceOptions {
  store: Store;
  now: () => number;
}

/** An environment's organization roles: the fixed system roles and the operator's custom ones. */
export class RoleService {
  private readonly store: Store;
  private readonly now: () => number;

  constructor(options: RoleServiceOptions) {
    this.store = options.store;
    this.now = options.now;
  }

  private get db() {
    return this.store.db;
  }

  async listRoles(environment: Environment): Promise<RoleView[]> {
    const system: RoleView[] = Object.entries(SYSTEM_ROLES).map(([key, role]) => ({
      key,
      name: role.name,
      description: role.description,
      permissions: [...role.permissions],
      system: true,
      createdAt: null,
      updatedAt: null,
    }));
    return [...system, ...(await roles.listRoles(this.db, environment.id)).map(roleView)];
  }

  async createRole(
    environment: Environment,
    input: { key: string; name: string; description?: string | null | undefined; permissions: string[] },
  ): Promise<RoleView> {
    const key = validRoleKey(input.key);
    if (isSystemRole(key)) {
      throw apiError('conflict', `"${key}" is a system role; choose another key for a custom role.`, { fields: ['key'] });
    }
    const now = this.now();
    const row: roles.RoleRow = {
      environment_id: environment.id,
      key,
      name: trimmedName(input.name),
      description: input.description ?? null,
      permissions: JSON.stringify(validPermissions(input.permissions)),
      created_at: now,
      updated_at: now,
    };
    try {
      await roles.insertRole(this.db, environment.id, row);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw apiError('conflict', `A role with key "${key}" already exists in this environment; change it with PATCH instead.`, {
          fields: ['key'],
        });
      }
      throw error;
    }
    return roleView(row);
  }

  private refuseSystemRole(key: string, verb: string): void {
    if (isSystemRole(key)) {
      throw apiError('forbidden', `The system role "${key}" cannot be ${verb}; define a custom role with the permissions you need.`);
    }
  }

  async updateRole(
    environment: Environment,
    key: string,
    patch: { name?: string | undefined; description?: string | null | undefined; permissions?: string[] | undefined },
  ): Promise<RoleView> {
    this.refuseSystemRole(key, 'changed');
    const columns: Parameters<typeof roles.updateRole>[3] = { updated_at: this.now() };
    if (patch.name !== undefined) columns.name = trimmedName(patch.name);
    if (patch.description !== undefined) columns.description = patch.description;
    if (patch.permissions !== undefined) columns.permissions = JSON.stringify(validPermissions(patch.permissions));
    if (!(await roles.updateRole(this.db, environment.id, key, columns))) throw notFound(`Role ${key}`);
    return roleView((await roles.findRole(this.db, environment.id, key))!);
  }

  async deleteRole(environment: Environment, key: string): Promise<void> {
    this.refuseSystemRole(key, 'deleted');
    await inTransaction(this.db, async (tx) => {
      if (!(await roles.lockRole(this.store, tx, environment.id, key))) throw notFound(`Role ${key}`);
      const holders = await roles.countMembershipsWithRole(tx, environment.id, key);
      if (holders > 0) {
        throw apiError(
          'conflict',
          `Role "${key}" is held by ${holders} membership${holders === 1 ? '' : 's'}; change their roles first, then delete it.`,
        );
      }
      await roles.deleteRole(tx, environment.id, key);
    });
  }
}
