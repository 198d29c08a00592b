/**
 * Tenancy on the wire (docs/api/tenancy.md): signup, accounts and API keys, as request bodies
 * and answers. The gateway's routes declare them, the domain's signup and accounts take and
 * return their types, and the SDK's types are these.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ApiKeyView, TenantView } from './resources.js';
import { Closed, Id, IgnoredTenantIds, MultilineString, Nullable, StringEnum, Timestamp } from './schemas.js';

/** The longest password accepted (hashing a longer one would only cost the gateway time). */
export const MAX_PASSWORD_LENGTH = 1024;

const Email = Type.String({ minLength: 1, maxLength: 254 });
// a tab or line break in a password harms nothing (it is hashed, never stored or shown), and refusing one could lock out an account that has it
const Password = MultilineString({ maxLength: MAX_PASSWORD_LENGTH });
const SignupId = Type.String({ minLength: 1, maxLength: 100 });
const OneTimeToken = Type.String({ minLength: 1, maxLength: 200 });

export const TenantKind = StringEnum(['workspace', 'provider', 'operator'] as const);
export type TenantKind = Static<typeof TenantKind>;

/** How signup and login name a tenant; `walletId` is a provider's settlement wallet. */
export const TenantRef = Closed({ kind: TenantKind, id: Type.String(), walletId: Type.Optional(Id('wal')) });
export type TenantRef = Static<typeof TenantRef>;

export const SignupBody = Closed({
  kind: StringEnum(['workspace', 'provider'] as const),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Email,
  password: Password,
  website: Type.Optional(Type.String({ maxLength: 2000 })),
});
export type SignupInput = Static<typeof SignupBody>;

export const SignupVerifyBody = Closed({ signupId: SignupId, token: OneTimeToken });
export type SignupVerifyInput = Static<typeof SignupVerifyBody>;
export const SignupResendBody = Closed({ signupId: SignupId });
export type SignupResendInput = Static<typeof SignupResendBody>;
export const SignupParams = Type.Object({ id: SignupId });

export const SignupRecord = Closed({
  id: Type.String(),
  kind: StringEnum(['workspace', 'provider'] as const),
  name: Type.String(),
  status: StringEnum(['pending', 'verified'] as const),
  email: Type.String(),
  createdAt: Timestamp(),
  tokenExpiresAt: Timestamp({ description: 'when the latest verification token stops working' }),
  verifiedAt: Nullable(Timestamp()),
  tenantId: Nullable(Type.String()),
});
export type SignupRecord = Static<typeof SignupRecord>;

/** `token` only from a gateway started with --dev-echo-tokens. */
export const SignupStarted = Closed({ signup: SignupRecord, token: Type.Optional(Type.String({ description: 'only with --dev-echo-tokens' })) });
export type SignupStarted = Static<typeof SignupStarted>;

export const SignupVerified = Closed({
  tenant: TenantRef,
  apiKey: Closed({ id: Id('key'), key: Type.String({ description: 'the API key: shown this once' }), scopes: Type.Array(Type.String()) }),
});
export type SignupVerified = Static<typeof SignupVerified>;

export const LoginBody = Closed({ email: Email, password: Password });
export type LoginInput = Static<typeof LoginBody>;
export const ForgotPasswordBody = Closed({ email: Email });
export type ForgotPasswordInput = Static<typeof ForgotPasswordBody>;
export const ResetPasswordBody = Closed({ token: OneTimeToken, password: Password });
export type ResetPasswordInput = Static<typeof ResetPasswordBody>;

export const LoginResult = Closed({
  tenant: TenantRef,
  apiKey: Closed({ id: Id('key'), key: Type.String({ description: 'the API key: shown this once' }), scopes: Type.Array(Type.String()), expiresAt: Timestamp() }),
});
export type LoginResult = Static<typeof LoginResult>;

/** forgot and reset: nothing to say but yes (`token` only with --dev-echo-tokens, and only for a known address). */
export const Accepted = Closed({ ok: Type.Literal(true), token: Type.Optional(Type.String()) });

export const CreateKeyBody = Closed({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  scopes: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 100, description: "a subset of the calling key's scopes; default: the calling key's scopes" })),
  preset: Type.Optional(StringEnum(['agent'] as const, { description: 'agent: the scopes for a buying agent (no approvals:write)' })),
  expiresAt: Type.Optional(Nullable(Type.String({ maxLength: 64, description: "ISO 8601 time in the future, no later than the calling key's expiry; default: the calling key's expiry; null: never (only from a key that never expires)" }))),
  expiresInSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 * 366 * 24 * 3600, description: "seconds from now, ending no later than the calling key's expiry" })),
  ...IgnoredTenantIds,
});
export type CreateKeyInput = Omit<Static<typeof CreateKeyBody>, keyof typeof IgnoredTenantIds>;

/** What revoking a key answers: the key, and every key this call revoked (it and the keys made from it, down the tree). */
export const RevokedKeys = Closed({
  key: ApiKeyView,
  revokedCount: Type.Integer({ minimum: 0, description: 'how many keys this call revoked: the key (unless it was revoked before) and the keys made from it, and from those' }),
  revokedKeyIds: Type.Array(Type.String(), { description: 'the ids of those keys' }),
});
export type RevokedKeys = Static<typeof RevokedKeys>;

export const Whoami = Closed({ tenant: TenantView, key: ApiKeyView });
export type Whoami = Static<typeof Whoami>;
export const AuthSelf = Closed({ key: ApiKeyView, tenant: Closed({ id: Type.String(), kind: TenantKind }) });
export type AuthSelf = Static<typeof AuthSelf>;
export const AuthScopes = Closed({
  scopes: Type.Array(Type.String(), { description: "the calling key's scopes" }),
  available: Type.Array(Type.String(), { description: 'every scope a key of this tenant kind may hold' }),
});
export type AuthScopes = Static<typeof AuthScopes>;
