/**
 * The organization the session acts as: its record, members, invitations, domains and membership
 * requests (`gh.organization`). Every call needs membership; changes need the permission each names.
 */
import { organizationApiKeys } from './api-keys.js';
import type { Core } from './core.js';
import type { ImageInput, Upload } from './upload.js';
import type {
  AddCurrentMemberBody,
  CreateCurrentDomainBody,
  CreateInvitationBody,
  EnrollmentMode,
  Invitation,
  InvitationStatus,
  Member,
  MemberRemoved,
  MembershipRequest,
  OrganizationDomain,
  Page,
  UpdateCurrentOrganizationBody,
  UserOrganization,
} from './types.js';

/** Marks a redirectUrl as an invitation link, so handleRedirect() and the components know its token. */
export const INVITATION_MARK = '__gh_invitation';

export function createOrganizationFlows(core: Core, upload: Upload) {
  const updateOrganization = async (changes: UpdateCurrentOrganizationBody): Promise<UserOrganization> => {
    const updated = await core.authed('PATCH /v1/me/organization', { body: changes });
    const summary = {
      id: updated.id,
      name: updated.name,
      slug: updated.slug,
      role: updated.role,
      imageUrl: updated.imageUrl,
      mfaRequired: updated.mfaRequired,
    };
    const state = core.state();
    core.patchState({ organization: summary, organizations: state.organizations.map((o) => (o.id === summary.id ? summary : o)) });
    return updated;
  };

  return {
    get: (): Promise<UserOrganization> => core.authed('GET /v1/me/organization'),
    update: updateOrganization,
    /** Needs org:manage. Same ticket flow as the avatar. */
    setImage: async (file: ImageInput) => updateOrganization({ imageUrl: await upload('organization_image', file) }),
    /** The organization's API keys (org:manage). */
    apiKeys: organizationApiKeys(core),
    members: {
      list: (params?: { limit?: number; cursor?: string }): Promise<Page<Member>> =>
        core.authed('GET /v1/me/organization/members', { query: params ?? {} }),
      get: (userId: string): Promise<Member> => core.authed('GET /v1/me/organization/members/{userId}', { params: { userId } }),
      add: (params: AddCurrentMemberBody): Promise<Member> => core.authed('POST /v1/me/organization/members', { body: params }),
      updateRole: (userId: string, role: string): Promise<Member> =>
        core.authed('PATCH /v1/me/organization/members/{userId}', { params: { userId }, body: { role } }),
      remove: (userId: string): Promise<MemberRemoved> =>
        core.authed('DELETE /v1/me/organization/members/{userId}', { params: { userId } }),
    },
    /** Needs org:members:manage. Inviting a pending address again refreshes its invitation. */
    invitations: {
      list: async (params: { status?: InvitationStatus } = {}): Promise<Invitation[]> =>
        (await core.authed('GET /v1/me/organization/invitations', { query: params.status ? { status: params.status } : {} })).data,
      /**
       * A `redirectUrl` (default: the hosted accept page) gets an `__gh_invitation` mark, so the page
       * it leads to (handleRedirect(), SignIn, SignUp) knows its `token` is an invitation's.
       */
      create: (params: CreateInvitationBody): Promise<Invitation> => {
        const body = { ...params };
        if (body.redirectUrl) {
          const url = new URL(body.redirectUrl);
          url.searchParams.set(INVITATION_MARK, '1');
          body.redirectUrl = url.href;
        }
        return core.authed('POST /v1/me/organization/invitations', { body });
      },
      revoke: (invitationId: string): Promise<Invitation> =>
        core.authed('POST /v1/me/organization/invitations/{invitationId}/revoke', { params: { invitationId } }),
    },
    /** Reading needs membership; changes need org:manage. A new domain is verified by a code emailed to `email`. */
    domains: {
      list: async (): Promise<OrganizationDomain[]> => (await core.authed('GET /v1/me/organization/domains')).data,
      create: (params: CreateCurrentDomainBody): Promise<OrganizationDomain> =>
        core.authed('POST /v1/me/organization/domains', { body: params }),
      verify: (domainId: string, code: string): Promise<OrganizationDomain> =>
        core.authed('POST /v1/me/organization/domains/{domainId}/verify', { params: { domainId }, body: { code } }),
      update: (domainId: string, enrollmentMode: EnrollmentMode): Promise<OrganizationDomain> =>
        core.authed('PATCH /v1/me/organization/domains/{domainId}', { params: { domainId }, body: { enrollmentMode } }),
      remove: (domainId: string): Promise<{ id: string; deleted: true }> =>
        core.authed('DELETE /v1/me/organization/domains/{domainId}', { params: { domainId } }),
    },
    /** Needs org:members:manage. */
    membershipRequests: {
      list: async (): Promise<MembershipRequest[]> => (await core.authed('GET /v1/me/organization/membership-requests')).data,
      accept: (requestId: string): Promise<MembershipRequest> =>
        core.authed('POST /v1/me/organization/membership-requests/{requestId}/accept', { params: { requestId } }),
      reject: (requestId: string): Promise<MembershipRequest> =>
        core.authed('POST /v1/me/organization/membership-requests/{requestId}/reject', { params: { requestId } }),
    },
  };
}

export type OrganizationFlows = ReturnType<typeof createOrganizationFlows>;
