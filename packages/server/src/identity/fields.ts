import { Type } from 'typebox';
import { PASSWORD_MAX_LENGTH } from './password-policy.js';

/** Request fields that identity's routes and the email flows' routes both take. */
export const Password = Type.String({ maxLength: PASSWORD_MAX_LENGTH });
