import type { Machine, MachineToken, MachineWithSecret } from '@gatehouse/contract';
import { ABSENT_HASH, hashMatches, newMachineSecret, parseScopes, validScopes } from '../apikeys/secrets.js';
import type { Store } from '../db/index.js';
import { newId, sha256Hex } from '../lib/crypto.js';
import { ApiError, apiError, notFound } from '../lib/errors.js';
import { claimedEnvironmentId } from '../lib/ids.js';
import type { TenancyService } from '../tenancy/service.js';
import type { Environment } from '../tenancy/settings.js';
import * as q from './queries.js';
import type { MachineTokens } from './tokens.js';

/** An environment holds at most this many machines, so its listing stays one page. */
export const MAX_MACHINES = 500;

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

function machineView(row: Pick<q.MachineRow, 'id' | 'name' | 'scopes' | 'created_at'>): Machine {
  return { id: row.id, name: row.name, scopes: parseScopes(row.scopes), createdAt: row.created_at };
}

function wrongClient(): ApiError {
  return new ApiError(
    'unauthenticated',
    'Unknown client_id or wrong client_secret. Send the machine id and the secret shown when it was created or last rotated.',
  );
}

/**
 * Machines of an environment and their tokens (OAuth 2.0 client credentials, RFC 6749 §4.4). Every
 * token request reads the machine's row, so a deleted machine or a replaced secret stops at once;
 * tokens already issued live out their time, like a session's access tokens.
 */
export class MachineService {
  constructor(
    private readonly store: Store,
    private readonly tenancy: Pick<TenancyService, 'getEnvironment'>,
    private readonly tokens: MachineTokens,
    private readonly now: () => number,
  ) {}

  private get db() {
    return this.store.db;
  }

  async create(environment: Environment, input: { name: string; scopes?: string[] | undefined }): Promise<MachineWithSecret> {
    const name = input.name.trim();
    if (name === '') throw apiError('invalid_request', 'Field "name" must not be blank.', { fields: ['name'] });
    const scopes = validScopes(input.scopes);
    if ((await q.countMachines(this.db, environment.id)) >= MAX_MACHINES) {
      throw apiError('conflict', `This environment already has ${MAX_MACHINES} machines, the most it may hold. Delete unused ones first.`);
    }
    const now = this.now();
    const { secret, hash } = newMachineSecret();
    const row: q.MachineRow = {
      id: newId('mch', environment.id),
      name,
      scopes: JSON.stringify(scopes),
      secret_hash: hash,
      created_at: now,
      secret_rotated_at: now,
    };
    await q.insertMachine(this.db, environment.id, row);
    return { machine: machineView(row), clientSecret: secret };
  }

  async list(environment: Environment): Promise<Machine[]> {
    return (await q.listMachines(this.db, environment.id)).map(machineView);
  }

  async delete(environment: Environment, machineId: string): Promise<void> {
    if (!(await q.deleteMachine(this.db, environment.id, machineId))) throw notFound(`Machine ${machineId}`);
  }

  /** A new secret, shown once; the previous one stops at once. */
  async rotateSecret(environment: Environment, machineId: string): Promise<MachineWithSecret> {
    const { secret, hash } = newMachineSecret();
    const row = await q.replaceSecret(this.db, environment.id, machineId, hash, this.now());
    if (!row) throw notFound(`Machine ${machineId}`);
    return { machine: machineView(row), clientSecret: secret };
  }

  /**
   * A token for the client, or `401 unauthenticated`: an unknown client_id and a wrong secret get
   * the same answer after the same hash comparison. `scope` (space-separated) narrows the grant to
   * some of the machine's scopes; asking for any other is `400 invalid_request`.
   */
  async token(credentials: ClientCredentials, scope: string | undefined): Promise<MachineToken> {
    const row = credentials.clientId.startsWith('mch_') ? await q.findMachineById(this.db, credentials.clientId) : undefined;
    const matches = hashMatches(row?.secret_hash ?? ABSENT_HASH, sha256Hex(credentials.clientSecret));
    if (!row || !matches) throw wrongClient();
    const granted = grantedScopes(parseScopes(row.scopes), scope);
    const environment = await this.tenancy.getEnvironment(claimedEnvironmentId(row.environment_id));
    const { token, expiresIn } = await this.tokens.issue(environment, row.id, granted);
    return { access_token: token, token_type: 'Bearer', expires_in: expiresIn, scope: granted.join(' ') };
  }
}

/** The scopes a request asks for (all of the machine's when it names none), each of them the machine's. */
function grantedScopes(held: readonly string[], requested: string | undefined): string[] {
  if (requested === undefined || requested.trim() === '') return [...held];
  const asked = [...new Set(requested.split(' ').filter((s) => s !== ''))];
  const foreign = asked.filter((s) => !held.includes(s));
  if (foreign.length > 0) {
    throw apiError(
      'invalid_request',
      `The machine does not hold the scope${foreign.length === 1 ? '' : 's'} ${foreign
        .slice(0, 5)
        .map((s) => JSON.stringify(s))
        .join(', ')}; ask for some of its scopes (${held.join(' ') || 'it has none'}), or omit "scope" for all of them.`,
      { fields: ['scope'] },
    );
  }
  return asked;
}
