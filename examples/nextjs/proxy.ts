import { createRouteMatcher, gatehouseMiddleware } from '@gatehouse/nextjs/server';

const isProtected = createRouteMatcher(['/protected(.*)']);

// Sends signed-out visitors of /protected to /sign-in before any rendering. The page checks again
// with auth.protect(): the proxy is a convenience, not the security boundary.
export default gatehouseMiddleware(async (auth, request) => {
  if (isProtected(request)) await auth.protect();
});

export const config = {
  // Everything but Next's own files and static assets.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
