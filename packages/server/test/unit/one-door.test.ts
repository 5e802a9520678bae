import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-writes.js';

/**
 * One door to a session (DESIGN "One door to a session"): every way in proves a first factor and
 * calls auth/door.ts, which alone may start a session, mint its first refresh token or a hosted
 * handoff token. The second factor is decided there; a path around it would be a bypass, so the
 * source is held to it here, whatever the request-level tests happen to cover.
 */

const SRC = path.resolve(import.meta.dirname, '../../src');

interface Rule {
  what: string;
  pattern: RegExp;
  /** Files (relative to src/) where the pattern belongs. */
  allowed: readonly string[];
}

/** The composition root: it builds the session starter, to hand it to the door and nowhere else. */
const ROOT = 'app/compose.ts';

const RULES: readonly Rule[] = [
  {
    what: 'writes a session row (startSession)',
    pattern: /\bstartSession\b|start-queries\.js/,
    allowed: ['sessions/start-queries.ts', 'sessions/start.ts'],
  },
  {
    what: 'holds the session starter',
    pattern: /\bSessionStarter\b|sessions\/start\.js/,
    allowed: ['sessions/start.ts', 'auth/door.ts', ROOT],
  },
  {
    what: 'starts a session through a starter',
    pattern: /\bstarter\.start\s*\(/,
    allowed: ['auth/door.ts'],
  },
  {
    what: 'creates a session through the session service',
    pattern: /\bsessions?\s*\.\s*(create|start)\s*\(/,
    allowed: [],
  },
  {
    what: "mints a session's first refresh token",
    pattern: /\brefreshTokens\s*\.\s*first\s*\(/,
    allowed: ['sessions/start.ts'],
  },
  {
    what: 'mints a hosted handoff token',
    pattern: /\binsertHandoff\b/,
    allowed: ['auth/handoff-queries.ts', 'auth/door.ts'],
  },
  {
    // Only the door decides that a second factor comes first.
    what: 'issues a second-factor attempt',
    pattern: /\binsertSignInAttempt\b/,
    allowed: ['auth/attempt-queries.ts', 'auth/door.ts'],
  },
  {
    // A session after the second factor only once the attempt is spent, by the second step.
    what: 'completes a second-factor attempt',
    pattern: /\bcompleteSecondFactor\s*\(|\bspendSignInAttempt\b/,
    allowed: ['auth/door.ts', 'auth/attempt-queries.ts', 'auth/second-factor.ts'],
  },
];

/** Every place a source breaks a rule, as `file: what`. */
function breaches(files: readonly { file: string; source: string }[]): string[] {
  const found: string[] = [];
  for (const { file, source } of files) {
    for (const rule of RULES) if (rule.pattern.test(source) && !rule.allowed.includes(file)) found.push(`${file}: ${rule.what}`);
  }
  return found;
}

const server = sourceFiles(SRC).map((full) => ({
  file: path.relative(SRC, full).split(path.sep).join('/'),
  source: readFileSync(full, 'utf8'),
}));

describe('the one door to a session', () => {
  it('is the only way to a session in the server', () => {
    expect(breaches(server)).toEqual([]);
  });

  it('holds: the door starts sessions, and the root hands the starter to the door alone', () => {
    const source = (file: string) => server.find((s) => s.file === file)?.source ?? '';
    expect(source('auth/door.ts')).toMatch(/\bstarter\.start\s*\(/);
    // One starter, built as the door's and never named again.
    const root = source(ROOT);
    expect(root.match(/new SessionStarter\(/g)).toHaveLength(1);
    expect(root).toMatch(/new SignInDoor\(\{[^}]*starter: new SessionStarter\(/);
    expect(root.match(/\bSessionStarter\b/g)).toHaveLength(2); // the import and the construction
  });

  it('fails when a route creates a session directly', () => {
    const route = `
      import { SessionStarter } from '../sessions/start.js';
      export const shortcut = (starter: SessionStarter) => async (request) =>
        starter.start(environmentOf(request), request.body.userId, requestContext(request));`;
    expect(breaches([{ file: 'identity/routes.ts', source: route }])).toEqual([
      'identity/routes.ts: holds the session starter',
      'identity/routes.ts: starts a session through a starter',
    ]);
  });

  it('fails when a way in skips the attempt: issuing one itself, or completing one without the second step', () => {
    const way = `
      import { insertSignInAttempt, spendSignInAttempt } from './attempt-queries.js';
      await insertSignInAttempt(db, environment.id, row);
      if (await spendSignInAttempt(db, environment.id, id, now)) return this.door.completeSecondFactor(environment, done, context);`;
    expect(breaches([{ file: 'auth/magic-link.ts', source: way }])).toEqual([
      'auth/magic-link.ts: issues a second-factor attempt',
      'auth/magic-link.ts: completes a second-factor attempt',
    ]);
  });

  it('holds the door to its rule: the decision and the attempt are in door.ts', () => {
    const door = server.find((s) => s.file === 'auth/door.ts')?.source ?? '';
    expect(door).toMatch(/SKIPS_SECOND_FACTOR/);
    expect(door).toMatch(/\binsertSignInAttempt\(/);
    expect(door).toMatch(/needs_second_factor_setup/);
  });

  it('fails when a service writes a session, a refresh token or a handoff token itself', () => {
    const service = `
      import { startSession } from '../sessions/start-queries.js';
      const refreshToken = this.refreshTokens.first(environment.id, id);
      await insertHandoff(db, environment.id, row);
      const session = await this.options.sessions.create(environment, user.id, context);`;
    expect(breaches([{ file: 'invitations/service.ts', source: service }])).toEqual([
      'invitations/service.ts: writes a session row (startSession)',
      'invitations/service.ts: creates a session through the session service',
      "invitations/service.ts: mints a session's first refresh token",
      'invitations/service.ts: mints a hosted handoff token',
    ]);
  });
});
