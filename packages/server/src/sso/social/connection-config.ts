/**
 * Saving a social connection: the generic OAuth 2.0 form and the Apple preset's fields are checked
 * the way a sign-in will use them, so a mistake is a 400 naming the field now, not a failed
 * sign-in later (and never a 500).
 */
import { apiError } from '../../lib/errors.js';
import type { Environment } from '../../tenancy/settings.js';
import { AppleKeyError, appleKey, checkAppleIds } from './apple.js';
import { isDotPath, type OAuth2Config, type TokenAuthMethod, type UserinfoFields } from './oauth2.js';

const invalid = (field: string, message: string) => apiError('invalid_request', message, { fields: [field] });

export interface OAuth2Input {
  authorizationUrl?: string;
  tokenUrl?: string;
  userinfoUrl?: string;
  clientId?: string;
  scopes?: string[];
  userinfoFields?: Partial<UserinfoFields>;
  trustEmailVerified?: boolean;
  tokenEndpointAuthMethod?: TokenAuthMethod;
}

type CheckUrl = (environment: Environment, raw: string, field: string) => string;

export function oauth2Config(environment: Environment, input: OAuth2Input, secret: string, checkUrl: CheckUrl): OAuth2Config {
  const url = (field: 'authorizationUrl' | 'tokenUrl' | 'userinfoUrl') => {
    const value = input[field];
    if (!value) throw invalid(field, `${field} is required for an OAuth 2.0 connection: copy it from the provider's developer documentation.`);
    return checkUrl(environment, value, field);
  };
  const authorizationUrl = url('authorizationUrl');
  const tokenUrl = url('tokenUrl');
  const userinfoUrl = url('userinfoUrl');
  if (!input.clientId) throw invalid('clientId', 'clientId is required: the client id the provider gave you.');
  if (!secret) throw invalid('clientSecret', 'clientSecret is required: the client secret the provider gave you.');
  const fields = input.userinfoFields;
  if (!fields || !fields.id || !fields.email) {
    throw invalid('userinfoFields', 'userinfoFields needs id and email: dot paths into the userinfo JSON, e.g. {"id": "id", "email": "email", "emailVerified": "email_verified"}.');
  }
  const userinfoFields: UserinfoFields = { id: fields.id, email: fields.email };
  for (const key of ['id', 'email', 'emailVerified', 'firstName', 'lastName'] as const) {
    const path = fields[key];
    if (path === undefined) continue;
    if (!isDotPath(path)) throw invalid('userinfoFields', `userinfoFields.${key} must be a dot path such as "data.user.${key}" (letters, digits, _ $ @ : - between dots).`);
    userinfoFields[key] = path;
  }
  return {
    authorizationUrl,
    tokenUrl,
    userinfoUrl,
    clientId: input.clientId,
    scopes: input.scopes ?? [],
    userinfoFields,
    trustEmailVerified: input.trustEmailVerified ?? false,
    tokenEndpointAuthMethod: input.tokenEndpointAuthMethod ?? 'client_secret_basic',
  };
}

/** Apple's Team ID, Key ID and .p8 key (the key is what gets sealed, in place of a client secret). */
export function appleFields(input: { teamId?: string; keyId?: string }, privateKey: string): { teamId: string; keyId: string } {
  const problem = checkAppleIds(input.teamId, input.keyId);
  if (problem) throw invalid(problem.startsWith('teamId') ? 'teamId' : 'keyId', problem);
  if (!privateKey) throw invalid('privateKey', 'privateKey is required for Apple: the text of the .p8 key file from your Apple Developer account.');
  try {
    appleKey(privateKey);
  } catch (error) {
    if (error instanceof AppleKeyError) throw invalid('privateKey', error.message);
    throw error;
  }
  return { teamId: input.teamId!, keyId: input.keyId! };
}
