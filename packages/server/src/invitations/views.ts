import type { Invitation, InvitationStatus, MembershipRequest, UserInvitation } from '@gatehouse/contract';
import type { OrganizationInvitationsTable, OrganizationMembershipRequestsTable, OrganizationsTable } from '../db/schema.js';

/** A pending invitation past its expiry reads as expired; nothing rewrites the row. */
export function invitationStatus(row: Pick<OrganizationInvitationsTable, 'status' | 'expires_at'>, now: number): InvitationStatus {
  return row.status === 'pending' && row.expires_at <= now ? 'expired' : row.status;
}

export function invitationView(row: Readonly<OrganizationInvitationsTable>, now: number): Invitation {
  return {
    id: row.id,
    organizationId: row.organization_id,
    email: row.email,
    role: row.role,
    status: invitationStatus(row, now),
    expiresAt: row.expires_at,
    createdAt: row.created_at,
  };
}

/** The organization as an invitee sees it. */
export function organizationBrief(organization: Pick<OrganizationsTable, 'id' | 'name' | 'slug' | 'image_url'>) {
  return { id: organization.id, name: organization.name, slug: organization.slug, imageUrl: organization.image_url };
}

export function userInvitationView(
  row: Readonly<OrganizationInvitationsTable>,
  organization: Pick<OrganizationsTable, 'id' | 'name' | 'slug' | 'image_url'>,
  now: number,
): UserInvitation {
  return {
    ...invitationView(row, now),
    organization: organizationBrief(organization),
  };
}

/** A membership request, with the requester's email. */
export function requestView(row: OrganizationMembershipRequestsTable & { email: string }): MembershipRequest {
  return {
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    email: row.email,
    status: row.status as MembershipRequest['status'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
