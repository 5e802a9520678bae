import { auth } from '@gatehouse/nextjs/server';
import { notes } from '../../notes';

/**
 * Changes data with the session cookie as the credential: auth() refuses the cookie on a request
 * from another site's page (Origin check), so a forged form post is signed out here.
 */
export async function POST(request: Request) {
  const { userId } = await auth();
  if (!userId) return Response.json({ error: { code: 'unauthenticated', message: 'Sign in first.' } }, { status: 401 });
  const form = await request.formData();
  notes.set(userId, String(form.get('note') ?? '').slice(0, 200));
  return Response.json({ saved: true });
}
