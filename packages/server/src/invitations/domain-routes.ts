import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  CreateCurrentDomainBody,
  CreateDomainBody,
  Deleted,
  MembershipRequest,
  MembershipRequestList,
  OrganizationDomain,
  OrganizationDomainList,
  OrganizationSuggestion,
  OrganizationSuggestionList,
  UpdateDomainBody,
  VerifyDomainBody,
} from '@gatehouse/contract';
import type { FastifyRequest } from 'fastify';
import { environmentOf, sessionOf } from '../http/credentials.js';
import { IdParams } from '../http/schemas.js';
import type { Actor } from '../organizations/access.js';
import type { MemberService } from '../organizations/member-service.js';
import type { DomainService } from './domain-service.js';
import type { RequestService } from './request-service.js';

export interface DomainRouteOptions {
  domains: DomainService;
  requests: RequestService;
  members: Pick<MemberService, 'currentOrganizationId'>;
}

const secret = { credentials: ['secret'] } as const;
const session = { credentials: ['session'] } as const;
const backend: Actor = { kind: 'backend' };
const tags = ['invitations'];

/** Verified domains (SK on any organization, ST on the current one), suggestions and membership requests. */
export const domainRoutes: FastifyPluginAsyncTypebox<DomainRouteOptions> = async (app, { domains, requests, members }) => {
  /** The session's environment, user and current organization. */
  function current(request: FastifyRequest) {
    const { environment, session: s } = sessionOf(request);
    return { environment, actor: { kind: 'member', userId: s.userId } as Actor, organizationId: members.currentOrganizationId(s) };
  }

  app.post(
    '/v1/organizations/:organizationId/domains',
    {
      config: secret,
      schema: {
        summary: 'Add a domain, verified at once (the operator vouches for it)',
        tags,
        params: IdParams('organizationId'),
        body: CreateDomainBody,
        response: { 201: OrganizationDomain },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await domains.createVerified(environmentOf(request), request.params.organizationId, request.body)),
  );

  app.get(
    '/v1/organizations/:organizationId/domains',
    {
      config: secret,
      schema: { summary: "An organization's domains", tags, params: IdParams('organizationId'), response: { 200: OrganizationDomainList } },
    },
    async (request) => ({ data: await domains.list(environmentOf(request), backend, request.params.organizationId) }),
  );

  app.patch(
    '/v1/organizations/:organizationId/domains/:domainId',
    {
      config: secret,
      schema: {
        summary: "Change a domain's enrolment mode",
        tags,
        params: IdParams('organizationId', 'domainId'),
        body: UpdateDomainBody,
        response: { 200: OrganizationDomain },
      },
    },
    async (request) =>
      domains.update(environmentOf(request), backend, request.params.organizationId, request.params.domainId, request.body.enrollmentMode),
  );

  app.delete(
    '/v1/organizations/:organizationId/domains/:domainId',
    {
      config: secret,
      schema: {
        summary: 'Remove a domain; it enrols nobody from now on',
        tags,
        params: IdParams('organizationId', 'domainId'),
        response: { 200: Deleted },
      },
    },
    async (request) => domains.remove(environmentOf(request), backend, request.params.organizationId, request.params.domainId),
  );

  app.post(
    '/v1/me/organization/domains',
    {
      config: session,
      schema: {
        summary: 'Add a domain to the current organization; a 6-digit code goes to `email`, an address at it. Needs org:manage',
        tags,
        body: CreateCurrentDomainBody,
        response: { 201: OrganizationDomain },
      },
    },
    async (request, reply) => {
      const { environment, actor, organizationId } = current(request);
      return reply.code(201).send(await domains.createUnverified(environment, actor, organizationId, request.body));
    },
  );

  app.get(
    '/v1/me/organization/domains',
    { config: session, schema: { summary: "The current organization's domains", tags, response: { 200: OrganizationDomainList } } },
    async (request) => {
      const { environment, actor, organizationId } = current(request);
      return { data: await domains.list(environment, actor, organizationId) };
    },
  );

  app.post(
    '/v1/me/organization/domains/:domainId/verify',
    {
      config: session,
      schema: {
        summary: 'Verify a domain with its emailed code; needs org:manage',
        tags,
        params: IdParams('domainId'),
        body: VerifyDomainBody,
        response: { 200: OrganizationDomain },
      },
    },
    async (request) => {
      const { environment, actor, organizationId } = current(request);
      return domains.verify(environment, actor, organizationId, request.params.domainId, request.body.code, request.ip);
    },
  );

  app.patch(
    '/v1/me/organization/domains/:domainId',
    {
      config: session,
      schema: {
        summary: "Change a domain's enrolment mode; needs org:manage",
        tags,
        params: IdParams('domainId'),
        body: UpdateDomainBody,
        response: { 200: OrganizationDomain },
      },
    },
    async (request) => {
      const { environment, actor, organizationId } = current(request);
      return domains.update(environment, actor, organizationId, request.params.domainId, request.body.enrollmentMode);
    },
  );

  app.delete(
    '/v1/me/organization/domains/:domainId',
    {
      config: session,
      schema: { summary: 'Remove a domain; needs org:manage', tags, params: IdParams('domainId'), response: { 200: Deleted } },
    },
    async (request) => {
      const { environment, actor, organizationId } = current(request);
      return domains.remove(environment, actor, organizationId, request.params.domainId);
    },
  );

  app.get(
    '/v1/me/organization-suggestions',
    {
      config: session,
      schema: {
        summary: 'Organizations whose verified domain matches your verified email',
        tags,
        response: { 200: OrganizationSuggestionList },
      },
    },
    async (request) => {
      const { environment, session: s } = sessionOf(request);
      return { data: await requests.suggestionsFor(environment, s.userId) };
    },
  );

  app.post(
    '/v1/me/organization-suggestions/:suggestionId/accept',
    {
      config: session,
      schema: {
        summary: 'Ask to join a suggested organization: files a membership request',
        tags,
        params: IdParams('suggestionId'),
        response: { 200: OrganizationSuggestion },
      },
    },
    async (request) => {
      const { environment, session: s } = sessionOf(request);
      return requests.acceptSuggestion(environment, s.userId, request.params.suggestionId);
    },
  );

  app.get(
    '/v1/me/organization/membership-requests',
    {
      config: session,
      schema: {
        summary: 'Pending requests to join the current organization; needs org:members:manage',
        tags,
        response: { 200: MembershipRequestList },
      },
    },
    async (request) => {
      const { environment, actor, organizationId } = current(request);
      return { data: await requests.listPending(environment, actor, organizationId) };
    },
  );

  for (const [action, accept] of [
    ['accept', true],
    ['reject', false],
  ] as const) {
    app.post(
      `/v1/me/organization/membership-requests/:requestId/${action}`,
      {
        config: session,
        schema: {
          summary: accept ? 'Accept a membership request: the user joins as member' : 'Reject a membership request',
          tags,
          params: IdParams('requestId'),
          response: { 200: MembershipRequest },
        },
      },
      async (request) => {
        const { environment, actor, organizationId } = current(request);
        return requests.decide(environment, actor, organizationId, request.params.requestId, accept);
      },
    );
  }
};
