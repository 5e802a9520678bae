import type { MembershipRequest, OrganizationSuggestion } from '@gatehouse/contract';
import type { Store } from '../db/index.js';
import { apiError } from '../lib/errors.js';
import { type Actor, type OrganizationAccess, requirePermission } from '../organizations/access.js';
import { addMembership } from '../organizations/memberships.js';
import { PERMISSIONS } from '../organizations/roles.js';
import type { Environment } from '../tenancy/settings.js';
import * as dq from './domain-queries.js';
import { domainOf } from './domain-service.js';
import { organizationBrief, requestView } from './views.js';

export interface RequestServiceOptions {
  store: Store;
  access: OrganizationAccess;
  now: () => number;
}

/**
 * Suggestions (offered by an automatic_suggestion domain) and the membership requests a user files
 * by accepting one; members with org:members:manage accept (the user joins as member) or reject.
 */
/**
 * A suggestion is offered to an address, not to a user: once the user's address is no longer a
 * verified one at the domain that offered it (the address changed, or the domain did), it is gone.
 * A request the user already filed stays for the organization to decide, with the current address.
 */
function stillOpen(row: dq.SuggestionRow): boolean {
  if (row.status !== 'suggested') return true;
  return row.user_email_verified === 1 && row.domain_verified === 1 && row.domain_name === domainOf(row.user_email);
}

function suggestionView(row: dq.SuggestionRow, status: OrganizationSuggestion['status']): OrganizationSuggestion {
  return {
    id: row.id,
    status,
    organization: organizationBrief({
      id: row.organization_id,
      name: row.organization_name,
      slug: row.organization_slug,
      image_url: row.organization_image_url,
    }),
    createdAt: row.created_at,
  };
}

export class RequestService {
  constructor(private readonly options: RequestServiceOptions) {}

  private get db() {
    return this.options.store.db;
  }

  async suggestionsFor(environment: Environment, userId: string): Promise<OrganizationSuggestion[]> {
    const rows = await dq.listSuggestionsFor(this.db, environment.id, userId);
    return rows.filter(stillOpen).map((row) => suggestionView(row, row.status as OrganizationSuggestion['status']));
  }

  /** The user asks to join: the suggestion becomes a pending request. */
  async acceptSuggestion(environment: Environment, userId: string, suggestionId: string): Promise<OrganizationSuggestion> {
    const [row] = await dq.listSuggestionsFor(this.db, environment.id, userId, suggestionId);
    if (!row || !stillOpen(row)) {
      throw apiError('not_found', `Suggestion ${suggestionId} was not found among your organization suggestions.`);
    }
    if (row.status === 'suggested') await dq.moveRequest(this.db, environment.id, row.id, 'suggested', 'pending', this.options.now());
    return suggestionView(row, 'pending');
  }

  async listPending(environment: Environment, actor: Actor, organizationId: string): Promise<MembershipRequest[]> {
    return this.options.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership) requirePermission(membership, PERMISSIONS.membersManage, 'Reading membership requests');
      return (await dq.listRequests(tx, environment.id, organizationId, 'pending')).map(requestView);
    });
  }

  async decide(
    environment: Environment,
    actor: Actor,
    organizationId: string,
    requestId: string,
    accept: boolean,
  ): Promise<MembershipRequest> {
    return this.options.access.withOrganization(environment, actor, organizationId, async (tx, _org, membership) => {
      if (membership)
        requirePermission(
          membership,
          PERMISSIONS.membersManage,
          accept ? 'Accepting membership requests' : 'Rejecting membership requests',
        );
      const row = await dq.findRequest(tx, environment.id, requestId);
      if (!row || row.organization_id !== organizationId || row.status === 'suggested') {
        throw apiError('not_found', `Membership request ${requestId} was not found in this organization.`);
      }
      if (row.status !== 'pending') throw apiError('conflict', `This membership request was already ${row.status}.`);
      const now = this.options.now();
      // Checked under the organization's lock: no concurrent change adds the member meanwhile.
      if (accept) await addMembership(tx, environment.id, { organizationId, userId: row.user_id, role: 'member', now });
      await dq.moveRequest(tx, environment.id, row.id, 'pending', accept ? 'accepted' : 'rejected', now);
      return requestView((await dq.findRequestWithEmail(tx, environment.id, row.id))!);
    });
  }
}
