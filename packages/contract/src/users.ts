import { Type, type Static } from 'typebox';
import { define } from './registry.js';

/** The user as the sign-up and sign-in answers name them. */
export const AuthUser = define('AuthUser', Type.Object({ id: Type.String(), email: Type.String() }));
export type AuthUser = Static<typeof AuthUser>;
