import { Type } from 'typebox';
import { PaginationQuery } from '../http/schemas.js';

/**
 * The request fields of the role routes and the organization id of switch-organization. The bodies of
 * the organization and member routes are the contract's (@gatehouse/contract), which the SDKs share.
 */

export { Id, Nullable } from '@gatehouse/contract';

export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f]*$' });

export const RoleDescription = Type.String({ maxLength: 500 });
export const Permissions = Type.Array(Type.String({ minLength: 1, maxLength: 140 }), {
  maxItems: 100,
  description: 'Permission keys of the form org:<feature>:<action>',
});

export const MemberListQuery = PaginationQuery;
