/**
 * Checked by `npm run typecheck` (this package's tsc): the types a user of @gatehouse/js sees ARE the
 * contract's, so a change of a server schema fails this package's build until it follows.
 * `toEqualTypeOf` is mutual assignability and more: an extra, missing or retyped field fails.
 */
import type * as Contract from '@gatehouse/contract';
import { expectTypeOf } from 'vitest';
import type * as Sdk from '../../src/index.js';

type Answer<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;
type G = Sdk.Gatehouse;

// The public names.
// The signed-in user sees themselves as the session surface shows them: without privateMetadata.
expectTypeOf<Sdk.User>().toEqualTypeOf<Contract.SessionUser>();
expectTypeOf<Sdk.AuthUser>().toEqualTypeOf<Contract.AuthUser>();
expectTypeOf<Sdk.SessionTokens>().toEqualTypeOf<Contract.SessionTokens>();
expectTypeOf<Sdk.OrganizationSummary>().toEqualTypeOf<Contract.OrganizationSummary>();
expectTypeOf<Sdk.UserOrganization>().toEqualTypeOf<Contract.UserOrganization>();
expectTypeOf<Sdk.Member>().toEqualTypeOf<Contract.Member>();
expectTypeOf<Sdk.SessionView>().toEqualTypeOf<Contract.Session>();
expectTypeOf<Sdk.UploadTicket>().toEqualTypeOf<Contract.UploadTicket>();
expectTypeOf<Sdk.UploadPurpose>().toEqualTypeOf<Contract.UploadPurpose>();
expectTypeOf<Sdk.EnvironmentInfo>().toEqualTypeOf<Contract.Environment>();
expectTypeOf<Sdk.Page<Sdk.Member>>().toEqualTypeOf<Contract.MemberPage>();
expectTypeOf<Sdk.Page<Sdk.UserOrganization>>().toEqualTypeOf<Contract.UserOrganizationPage>();
expectTypeOf<Sdk.SignUpParams>().toEqualTypeOf<Contract.SignUpBody>();
expectTypeOf<Sdk.ProfileUpdate>().toEqualTypeOf<Contract.ProfileUpdateBody>();
expectTypeOf<Sdk.ErrorCode>().toEqualTypeOf<Contract.ErrorCode>();

// What the client's state and flows take and answer.
expectTypeOf<Sdk.GatehouseState["user"]>().toEqualTypeOf<Contract.SessionUser | null>();
expectTypeOf<Sdk.GatehouseState['organization']>().toEqualTypeOf<Contract.OrganizationSummary | null>();
expectTypeOf<Sdk.GatehouseState['organizations']>().toEqualTypeOf<Contract.OrganizationSummary[]>();
expectTypeOf<Parameters<G['signUp']>[0]>().toEqualTypeOf<Contract.SignUpBody>();
expectTypeOf<Parameters<G['signIn']['password']>[0]>().toEqualTypeOf<Contract.SignInBody>();
expectTypeOf<Parameters<G['user']['update']>[0]>().toEqualTypeOf<Contract.ProfileUpdateBody>();
expectTypeOf<Answer<G['user']['changePassword']>>().toEqualTypeOf<Contract.PasswordChanged>();
expectTypeOf<Answer<G['passwordReset']['complete']>>().toEqualTypeOf<Contract.PasswordReset>();
expectTypeOf<Answer<G['user']['identities']['list']>>().toEqualTypeOf<Contract.UserIdentity[]>();
expectTypeOf<Sdk.UserIdentity>().toEqualTypeOf<Contract.UserIdentity>();
expectTypeOf<Answer<G['sessions']['list']>>().toEqualTypeOf<Contract.Session[]>();
expectTypeOf<Answer<G['organizations']['list']>>().toEqualTypeOf<Contract.UserOrganizationPage>();
expectTypeOf<Parameters<G['organizations']['create']>[0]>().toEqualTypeOf<Contract.CreateUserOrganizationBody>();
expectTypeOf<Answer<G['organizations']['create']>>().toEqualTypeOf<Contract.UserOrganization>();
expectTypeOf<Answer<G['organization']['get']>>().toEqualTypeOf<Contract.UserOrganization>();
expectTypeOf<Parameters<G['organization']['update']>[0]>().toEqualTypeOf<Contract.UpdateCurrentOrganizationBody>();
expectTypeOf<Answer<G['organization']['members']['list']>>().toEqualTypeOf<Contract.MemberPage>();
expectTypeOf<Parameters<G['organization']['members']['add']>[0]>().toEqualTypeOf<Contract.AddCurrentMemberBody>();
expectTypeOf<Answer<G['organization']['members']['add']>>().toEqualTypeOf<Contract.Member>();
expectTypeOf<Answer<G['organization']['members']['remove']>>().toEqualTypeOf<Contract.MemberRemoved>();
expectTypeOf<Answer<G['environment']>>().toEqualTypeOf<Contract.Environment>();
expectTypeOf<Sdk.GatehouseError['code']>().toEqualTypeOf<Contract.ErrorCode>();
