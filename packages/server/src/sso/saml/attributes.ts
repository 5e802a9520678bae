/** Entra ID and AD FS name their attributes with WS-Federation claim URIs. */
export const WS_CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';

/** The first value of the first attribute present among `names`. */
export function firstOf(attributes: Record<string, string[]>, names: string[]): string | null {
  for (const name of names) if (attributes[name]?.[0]) return attributes[name][0];
  return null;
}
