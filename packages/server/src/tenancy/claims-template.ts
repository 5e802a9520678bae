import { apiError } from '../lib/errors.js';
import { exceedsDepth } from '../lib/json.js';

/**
 * Custom session claims: an environment's `sessionClaims` template, a JSON object whose string
 * values may hold placeholders such as `{{user.email}}` or `{{user.publicMetadata.plan}}`. It is
 * checked when saved (a bad one is a 400 then, never a failed sign-in), compiled once per settings
 * version, and rendered into every access token.
 */

/** Most bytes of the template as JSON, and of its rendering: over it, the token goes without them. */
export const SESSION_CLAIMS_MAX_BYTES = 1024;

/** Registered claims and the organization claims: a template never sets them. */
const REGISTERED = new Set(['iss', 'sub', 'sid', 'iat', 'nbf', 'exp', 'jti', 'azp', 'aud', 'typ', 'kid', 'alg', 'amr', 'fva', 'act']);

/** Names that alter an object's prototype in applications that copy claims into plain objects. */
const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

export function isProtectedClaim(name: string): boolean {
  return REGISTERED.has(name) || name.startsWith('org_') || PROTOTYPE_NAMES.has(name);
}

/** What a template may read of the user: what the user may see anyway and nobody but the backend writes. */
export interface ClaimsUser {
  id: string;
  email: string;
  emailVerified: boolean;
  firstName: string | null;
  lastName: string | null;
  username: string | null;
  imageUrl: string | null;
  publicMetadata: Record<string, unknown>;
  createdAt: number;
}

const USER_FIELDS = new Set<string>([
  'id',
  'email',
  'emailVerified',
  'firstName',
  'lastName',
  'username',
  'imageUrl',
  'publicMetadata',
  'createdAt',
]);

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const PATH_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DEPTH = 8;

type Path = readonly string[];

/** A compiled template: a function of the user, and whether it reads the user at all. */
export interface CompiledClaims {
  readsUser: boolean;
  render(user: ClaimsUser | undefined): Record<string, unknown> | undefined;
}

function refuse(message: string): never {
  throw apiError('invalid_request', `Field "sessionClaims": ${message}`, { fields: ['sessionClaims'] });
}

/** `user.publicMetadata.plan` → ['publicMetadata', 'plan'], refusing what a template may not read. */
function parsePath(expression: string): Path {
  const parts = expression.split('.');
  if (parts[0] !== 'user' || parts.length < 2) {
    refuse(`"{{${expression}}}" is not a known placeholder; use {{user.<field>}}, such as {{user.email}} or {{user.publicMetadata.plan}}.`);
  }
  const field = parts[1]!;
  if (field === 'privateMetadata' || field === 'unsafeMetadata') {
    refuse(
      field === 'privateMetadata'
        ? '{{user.privateMetadata}} cannot be used: access tokens are readable by the user, and private metadata is for the backend only.'
        : '{{user.unsafeMetadata}} cannot be used: the user writes unsafe metadata themselves, so a claim made from it could not be trusted. Copy what you need to publicMetadata.',
    );
  }
  if (!USER_FIELDS.has(field)) {
    refuse(`"{{${expression}}}" names no user field; the fields are ${[...USER_FIELDS].map((f) => `user.${f}`).join(', ')}.`);
  }
  if (parts.length > 2 && field !== 'publicMetadata') refuse(`"{{${expression}}}": only publicMetadata has keys below it.`);
  if (parts.length > 2 + MAX_DEPTH) refuse(`"{{${expression}}}" goes deeper than ${MAX_DEPTH} keys.`);
  for (const part of parts.slice(2)) {
    if (!PATH_SEGMENT.test(part)) refuse(`"{{${expression}}}": keys are letters, digits, "_" and "-".`);
  }
  return parts.slice(1);
}

function lookup(user: ClaimsUser | undefined, path: Path): unknown {
  let value: unknown = user;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return null;
    value = (value as Record<string, unknown>)[key];
  }
  return value === undefined ? null : value;
}

type Node = (user: ClaimsUser | undefined) => unknown;

function compileString(text: string, reads: { user: boolean }): Node {
  const whole = WHOLE.exec(text);
  if (whole) {
    // The whole value is one placeholder: the claim takes the value's own JSON type.
    const path = parsePath(whole[1]!);
    reads.user = true;
    return (user) => lookup(user, path);
  }
  const pieces: (string | Path)[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    pieces.push(text.slice(last, match.index), parsePath(match[1]!));
    last = match.index + match[0].length;
  }
  if (pieces.length === 0) return () => text;
  pieces.push(text.slice(last));
  reads.user = true;
  return (user) =>
    pieces
      .map((piece) => {
        if (typeof piece === 'string') return piece;
        const value = lookup(user, piece);
        if (value === null) return '';
        return typeof value === 'object' ? JSON.stringify(value) : String(value);
      })
      .join('');
}

function compileValue(value: unknown, depth: number, reads: { user: boolean }): Node {
  if (depth > MAX_DEPTH) refuse(`nested more than ${MAX_DEPTH} levels deep.`);
  if (typeof value === 'string') return compileString(value, reads);
  if (Array.isArray(value)) {
    const items = value.map((item) => compileValue(item, depth + 1, reads));
    return (user) => items.map((item) => item(user));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([key, child]) => {
      if (PROTOTYPE_NAMES.has(key)) refuse(`uses the key "${key}", which alters applications' objects when they copy claims. Choose another name.`);
      return [key, compileValue(child, depth + 1, reads)] as const;
    });
    return (user) => Object.fromEntries(entries.map(([key, child]) => [key, child(user)]));
  }
  return () => value;
}

/**
 * Checks a template and compiles it; throws 400 invalid_request naming the problem. Used when the
 * setting is saved, and (the template then known to be good) when it is first rendered.
 */
export function compileSessionClaims(template: unknown): CompiledClaims {
  if (typeof template !== 'object' || template === null || Array.isArray(template)) {
    refuse('must be a JSON object (the claims to add) or null (none).');
  }
  // Before anything stringifies it: 500,000 nested arrays parse, but overflow JSON.stringify's stack.
  if (exceedsDepth(template, MAX_DEPTH + 1)) refuse(`nested more than ${MAX_DEPTH} levels deep.`);
  const bytes = Buffer.byteLength(JSON.stringify(template), 'utf8');
  if (bytes > SESSION_CLAIMS_MAX_BYTES) {
    refuse(
      `is ${bytes} bytes as JSON, over the ${SESSION_CLAIMS_MAX_BYTES}-byte limit. Keep only what applications read from every token.`,
    );
  }
  const names = Object.keys(template);
  const taken = names.filter(isProtectedClaim);
  if (taken.length > 0) {
    refuse(
      `${taken.map((n) => `"${n}"`).join(', ')} cannot be set: registered claims (iss, sub, sid, iat, nbf, exp, jti, azp, aud, amr, fva, act) and org_* claims belong to Gatehouse, and __proto__, constructor and prototype alter applications' objects. Choose other names.`,
    );
  }
  const reads = { user: false };
  const root = compileValue(template, 0, reads);
  return {
    readsUser: reads.user,
    render(user) {
      const claims = root(user) as Record<string, unknown>;
      // Refused when saved; dropped here too, whatever put them in the stored settings.
      for (const name of Object.keys(claims)) if (isProtectedClaim(name)) delete claims[name];
      // A rendering over the cap is left out whole, never cut: a partial set of claims could mislead.
      return Buffer.byteLength(JSON.stringify(claims), 'utf8') > SESSION_CLAIMS_MAX_BYTES ? undefined : claims;
    },
  };
}

/**
 * Compiled templates, by the settings object that holds them (one per settings version on a node:
 * the environment cache hands out the same object until the settings change), with a bounded map
 * by text behind it for environments read afresh.
 */
export class SessionClaimsCompiler {
  private readonly byObject = new WeakMap<object, CompiledClaims>();
  private readonly byText = new Map<string, CompiledClaims>();

  constructor(private readonly maxTexts = 1000) {}

  get(template: object): CompiledClaims {
    const known = this.byObject.get(template);
    if (known) return known;
    const text = JSON.stringify(template);
    let compiled = this.byText.get(text);
    if (!compiled) {
      try {
        compiled = compileSessionClaims(template);
      } catch {
        // Checked when saved, so only settings written around the API get here: no claims, no failed sign-in.
        compiled = { readsUser: false, render: () => undefined };
      }
      if (this.byText.size >= this.maxTexts) this.byText.delete(this.byText.keys().next().value!);
      this.byText.set(text, compiled);
    }
    this.byObject.set(template, compiled);
    return compiled;
  }
}
