import type { Invitation, InvitationStatus, UserInvitation } from '@gatehouse/contract';
import type { OrganizationInvitationsTable, OrganizationsTable } from '../db/schema.js';

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

export function userInvitationView(
  row: Readonly<OrganizationInvitationsTable>,
  organization: Pick<OrganizationsTable, 'id' | 'name' | 'slug' | 'image_url'>,
  now: number,
): UserInvitation {
  return {
    ...invitationView(row, now),
    organization: { id: organization.id, name: organization.name, slug: organization.slug, imageUrl: organization.image_url },
  };
}
