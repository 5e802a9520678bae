import { Type, type Static } from 'typebox';
import { define } from './registry.js';

/** Impersonation: actor tokens (`act_…`) start a session whose tokens carry `act: {sub}` (docs/impersonation.md). */

export const ACTOR_TOKEN_DEFAULT_SECONDS = 600;
export const ACTOR_TOKEN_MAX_SECONDS = 3600;

export const CreateActorTokenBody = Type.Object(
  {
    userId: Type.String({ minLength: 1, maxLength: 128, description: 'The user to act as' }),
    actor: Type.Object(
      {
        sub: Type.String({
          minLength: 1,
          maxLength: 256,
          description: "Who acts: an operator's user id or a label such as \"support:ada\". Operators (the console) always act as themselves.",
        }),
      },
      { additionalProperties: false },
    ),
    expiresInSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: ACTOR_TOKEN_MAX_SECONDS,
        description: 'How long the token can be redeemed (default 600, at most 3600); the session it starts lives at most an hour',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateActorTokenBody = Static<typeof CreateActorTokenBody>;

export const ActorToken = define(
  'ActorToken',
  Type.Object({
    id: Type.String({ description: 'act_…' }),
    token: Type.String({ description: 'Shown in this answer only; redeem it once at POST /v1/auth/actor-token' }),
    url: Type.String({ description: 'The hosted page /hosted/{environmentId}/actor?token=… that redeems it' }),
    expiresAt: Type.Integer(),
  }),
);
export type ActorToken = Static<typeof ActorToken>;

export const ActorTokenRedeemBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false });
export type ActorTokenRedeemBody = Static<typeof ActorTokenRedeemBody>;
