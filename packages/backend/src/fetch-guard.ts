import { authenticateRequest, type AuthenticatableRequest, type AuthenticateRequestOptions } from './authenticate-request.js';
import { unauthenticatedResponse } from './refusal.js';

/**
 * `requireAuth()` for fetch runtimes: undefined when the request is signed in (let it through), else
 * the 401 to answer. A Next.js middleware is `(await requireAuthResponse(request, options)) ??
 * NextResponse.next()`; the logic stays testable with a plain `Request`.
 */
export async function requireAuthResponse(
  request: AuthenticatableRequest,
  options: AuthenticateRequestOptions,
): Promise<Response | undefined> {
  const auth = await authenticateRequest(request, options);
  return auth.isSignedIn ? undefined : unauthenticatedResponse(auth);
}
