import type { NextRequest } from 'next/server';

/**
 * A predicate over requests from path patterns: a RegExp, or a string where `(.*)` matches
 * anything and `:name` one path segment, e.g. `createRouteMatcher(['/dashboard(.*)', '/api/:id'])`.
 */
export function createRouteMatcher(
  patterns: (string | RegExp)[] | string | RegExp | ((request: NextRequest) => boolean),
): (request: NextRequest | Request) => boolean {
  if (typeof patterns === 'function') return patterns as (request: NextRequest | Request) => boolean;
  const regexps = (Array.isArray(patterns) ? patterns : [patterns]).map((pattern) =>
    pattern instanceof RegExp ? pattern : patternRegExp(pattern),
  );
  return (request: NextRequest | Request): boolean => {
    const pathname = 'nextUrl' in request ? request.nextUrl.pathname : new URL(request.url).pathname;
    return regexps.some((regexp) => regexp.test(pathname));
  };
}

export function patternRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; ) {
    if (pattern.startsWith('(.*)', i)) {
      source += '.*';
      i += 4;
    } else if (pattern[i] === ':' && /[A-Za-z_]/.test(pattern[i + 1] ?? '')) {
      const name = /^:[A-Za-z_][A-Za-z0-9_]*/.exec(pattern.slice(i))![0];
      source += '[^/]+';
      i += name.length;
    } else {
      source += pattern[i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i += 1;
    }
  }
  return new RegExp(`^${source}/?$`);
}
