import { cryptoRuntime } from '@gatehouse/backend';
import { auth } from '@gatehouse/nextjs/server';

// On the Edge runtime: the token is verified with WebCrypto there (no node:crypto).
export const runtime = 'edge';

export async function GET() {
  const { userId, orgId, isSignedIn } = await auth();
  const headers = { 'x-gatehouse-crypto': cryptoRuntime() };
  if (!isSignedIn) {
    return Response.json({ error: { code: 'unauthenticated', message: 'Sign in first.' } }, { status: 401, headers });
  }
  return Response.json({ userId, orgId }, { headers });
}
