import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SignedIn, SignInBody, SignUpBody, SignUpStarted, SignUpVerifyBody } from '@gatehouse/contract';
import { environmentOf } from '../http/credentials.js';
import { requestContext } from '../http/request-context.js';
import type { IdentityService } from '../identity/service.js';
import type { PasswordWay } from './password.js';
import type { SignUpVerification } from './sign-up-verification.js';
import { secondFactorAnswer, sendSignIn } from './second-factor-routes.js';

export interface PasswordRouteOptions {
  identity: Pick<IdentityService, 'assertSignUpOpen'>;
  password: PasswordWay;
  /** Sign-up when the environment requires a verified email. */
  signUpVerification: SignUpVerification;
}

const publishable = { credentials: ['publishable'] } as const;

/** POST /v1/auth/signup, /signup/verify and /signin. */
export const passwordRoutes: FastifyPluginAsyncTypebox<PasswordRouteOptions> = async (app, { identity, password, signUpVerification }) => {
  app.post(
    '/v1/auth/signup',
    {
      config: publishable,
      schema: {
        summary:
          'Create an account with email and password, and sign it in; or, when the environment requires a verified email, email a code first',
        description:
          'With emailVerification "required" the answer is 202 {status:"verification_required", signUpId} and a 6-digit code is emailed, identically whether or not the address has an account; POST /v1/auth/signup/verify creates the account.',
        tags: ['auth'],
        body: SignUpBody,
        response: { 201: SignedIn, 202: SignUpStarted },
      },
    },
    async (request, reply) => {
      const environment = environmentOf(request);
      if (environment.settings.emailVerification === 'required') {
        identity.assertSignUpOpen(environment);
        return reply.code(202).send(await signUpVerification.start(environment, request.body));
      }
      return sendSignIn(reply, await password.signUp(environment, request.body, requestContext(request)), 201);
    },
  );

  app.post(
    '/v1/auth/signup/verify',
    {
      config: publishable,
      schema: {
        summary: 'Finish a verified sign-up with the emailed code: creates the account and signs it in',
        tags: ['auth'],
        body: SignUpVerifyBody,
        response: { 201: SignedIn, ...secondFactorAnswer },
      },
    },
    async (request, reply) => {
      const environment = environmentOf(request);
      identity.assertSignUpOpen(environment);
      return sendSignIn(reply, await signUpVerification.verify(environment, request.body, requestContext(request), request.ip), 201);
    },
  );

  app.post(
    '/v1/auth/signin',
    {
      config: publishable,
      schema: {
        summary: 'Sign in with email and password',
        description:
          'An unknown email and a wrong password give the same 401 invalid_credentials, in the same time. A password changed or reset while the sign-in was being checked is 401 invalid_credentials too, and no session starts. Repeated failures for one address or from one client address are refused for a while with 429 rate_limited and Retry-After.',
        tags: ['auth'],
        body: SignInBody,
        response: { 200: SignedIn, ...secondFactorAnswer },
      },
    },
    async (request, reply) =>
      sendSignIn(reply, await password.signIn(environmentOf(request), request.body, requestContext(request), request.ip)),
  );
};
