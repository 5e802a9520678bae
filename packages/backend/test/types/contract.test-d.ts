/**
 * Checked by `npm run typecheck` (this package's tsc): the types a user of @gatehouse/backend sees
 * ARE the contract's, so a change of a server schema fails this package's build until it follows.
 * `toEqualTypeOf` is mutual assignability and more: an extra, missing or retyped field fails.
 */
import type * as Contract from '@gatehouse/contract';
import { expectTypeOf } from 'vitest';
import type * as Sdk from '../../src/index.js';

type Client = Sdk.GatehouseClient;
type Answer<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type FirstPage<F extends (...args: never[]) => PromiseLike<unknown>> = Awaited<ReturnType<F>>;

// The public names.
expectTypeOf<Sdk.User>().toEqualTypeOf<Contract.User>();
expectTypeOf<Sdk.Organization>().toEqualTypeOf<Contract.Organization>();
expectTypeOf<Sdk.Member>().toEqualTypeOf<Contract.Member>();
expectTypeOf<Sdk.Invitation>().toEqualTypeOf<Contract.Invitation>();
expectTypeOf<Sdk.InvitationStatus>().toEqualTypeOf<Contract.InvitationStatus>();
expectTypeOf<Sdk.Deleted>().toEqualTypeOf<Contract.Deleted>();
expectTypeOf<Sdk.MemberRemoval>().toEqualTypeOf<Contract.MemberRemoved>();
expectTypeOf<Sdk.SessionsRevoked>().toEqualTypeOf<Contract.SessionsRevoked>();
expectTypeOf<Sdk.Page<Sdk.User>>().toEqualTypeOf<Contract.UserPage>();
expectTypeOf<Sdk.Page<Sdk.Organization>>().toEqualTypeOf<Contract.OrganizationPage>();
expectTypeOf<Sdk.Page<Sdk.Member>>().toEqualTypeOf<Contract.MemberPage>();
expectTypeOf<Sdk.CreateUserParams>().toEqualTypeOf<Contract.CreateUserBody>();
expectTypeOf<Sdk.UpdateUserParams>().toEqualTypeOf<Contract.UpdateUserBody>();
expectTypeOf<Sdk.CreateOrganizationParams>().toEqualTypeOf<Contract.CreateOrganizationBody>();
expectTypeOf<Sdk.UpdateOrganizationParams>().toEqualTypeOf<Contract.UpdateOrganizationBody>();
expectTypeOf<Sdk.UpdateMemberParams>().toEqualTypeOf<Contract.RoleBody>();
expectTypeOf<Sdk.CreateInvitationParams>().toEqualTypeOf<Contract.CreateInvitationBody>();
// Narrower than the body (exactly one of userId or email), and always a valid body.
expectTypeOf<Sdk.AddMemberParams>().toExtend<Contract.AddMemberBody>();
expectTypeOf<Sdk.ErrorCode>().toEqualTypeOf<Contract.ErrorCode>();

// What the admin client's methods take and answer.
expectTypeOf<Answer<Client['users']['get']>>().toEqualTypeOf<Contract.User>();
expectTypeOf<Answer<Client['users']['create']>>().toEqualTypeOf<Contract.User>();
expectTypeOf<Parameters<Client['users']['create']>[0]>().toEqualTypeOf<Contract.CreateUserBody>();
expectTypeOf<Parameters<Client['users']['update']>[1]>().toEqualTypeOf<Contract.UpdateUserBody>();
expectTypeOf<Answer<Client['users']['delete']>>().toEqualTypeOf<Contract.Deleted>();
expectTypeOf<Answer<Client['users']['revokeSessions']>>().toEqualTypeOf<Contract.SessionsRevoked>();
expectTypeOf<FirstPage<Client['users']['list']>>().toEqualTypeOf<Contract.UserPage>();
expectTypeOf<Answer<Client['organizations']['get']>>().toEqualTypeOf<Contract.Organization>();
expectTypeOf<Parameters<Client['organizations']['create']>[0]>().toEqualTypeOf<Contract.CreateOrganizationBody>();
expectTypeOf<Parameters<Client['organizations']['update']>[1]>().toEqualTypeOf<Contract.UpdateOrganizationBody>();
expectTypeOf<FirstPage<Client['organizations']['list']>>().toEqualTypeOf<Contract.OrganizationPage>();
expectTypeOf<Answer<Client['members']['get']>>().toEqualTypeOf<Contract.Member>();
expectTypeOf<Answer<Client['members']['add']>>().toEqualTypeOf<Contract.Member>();
expectTypeOf<Parameters<Client['members']['update']>[2]>().toEqualTypeOf<Contract.RoleBody>();
expectTypeOf<Answer<Client['members']['remove']>>().toEqualTypeOf<Contract.MemberRemoved>();
expectTypeOf<FirstPage<Client['members']['list']>>().toEqualTypeOf<Contract.MemberPage>();
expectTypeOf<Answer<Client['invitations']['create']>>().toEqualTypeOf<Contract.Invitation>();
expectTypeOf<Parameters<Client['invitations']['create']>[1]>().toEqualTypeOf<Contract.CreateInvitationBody>();
expectTypeOf<Answer<Client['invitations']['revoke']>>().toEqualTypeOf<Contract.Invitation>();
expectTypeOf<Sdk.GatehouseApiError['code']>().toEqualTypeOf<Contract.ErrorCode>();
