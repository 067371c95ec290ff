/**
 * Accounts over REST: register, log in, who am I; and the bearer-token guard every
 * authenticated route uses (`requireAuth`, or `authenticateRequest` inside a handler).
 *
 * Register and login take the app from the optional `X-App-Code` header (default
 * `default`); on authenticated routes the app is the token's, whatever the header says.
 */
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AccountsService, User } from '../../accounts/service.js';
import type { AuthIdentity, Authenticator } from '../../accounts/tokens.js';
import {
  APP_CODE_PATTERN,
  loginSchema,
  MAX_USER_LOOKUP,
  parseAppCode,
  parseUserIds,
  registerSchema,
} from '../../accounts/validation.js';
import { envelopeTime, sendOk } from '../../shared/http-envelope.js';
import { declaredReply } from '../declared-reply.js';
import * as accountReplies from './account-replies.js';
import { errors } from '../../shared/error-codes.js';
import { documented, jsonSchemaOf, replySchemaOf, type JsonSchema } from './openapi.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller on routes guarded by {@link requireAuth}; null elsewhere. */
    auth: AuthIdentity | null;
  }
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive). */
export function bearerTokenOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * The caller's identity from the `Authorization` header.
 * @throws AppError `unauthenticated` (401) when the header is missing or the token is
 * malformed, tampered, expired or signed with another secret.
 */
export async function authenticateRequest(
  authenticator: Authenticator,
  request: FastifyRequest,
): Promise<AuthIdentity> {
  const token = bearerTokenOf(request);
  if (token === null) throw errors.TOKEN_MISSING();
  const identity = await authenticator.authenticate(token);
  if (identity === null) throw errors.TOKEN_INVALID();
  return identity;
}

/**
 * A preHandler that answers 401 (envelope) unless the request carries a valid bearer
 * token, and sets `request.auth`. Use per route (`{ preHandler: requireAuth(a) }`) or for a
 * whole plugin (`app.addHook('preHandler', requireAuth(a))`).
 */
export function requireAuth(authenticator: Authenticator): preHandlerAsyncHookHandler {
  return async (request) => {
    request.auth = await authenticateRequest(authenticator, request);
  };
}

/** The caller on a route guarded by {@link requireAuth}; 401 if the guard is missing. */
export function authOf(request: FastifyRequest): AuthIdentity {
  if (!request.auth) throw errors.TOKEN_MISSING();
  return request.auth;
}

/** The user as the API shows it (`created_at` formatted like the envelope's `time`). */
export function userJson(user: User) {
  return {
    id: user.id,
    username: user.username,
    nickname: user.nickname,
    avatar: user.avatar,
    app_code: user.appCode,
    created_at: envelopeTime(new Date(user.createdAtMs)),
  };
}

const appCodeHeader = {
  type: 'object',
  properties: {
    'x-app-code': {
      type: 'string',
      pattern: APP_CODE_PATTERN.source,
      description: 'The app of the account (default `default`)',
    },
  },
};

/** The register body; the password's rules are refinements, which JSON Schema cannot show. */
function registerBody(): JsonSchema {
  const body = jsonSchemaOf(registerSchema);
  const properties = body.properties as Record<string, JsonSchema>;
  properties.password = { type: 'string', description: '6-72 characters, at most 72 bytes UTF-8' };
  return body;
}

/** The user search's bounds (an invite box asks for a few names at a time). */
const SEARCH_PREFIX_MAX = 32;
const SEARCH_LIMIT_MAX = 20;
const SEARCH_LIMIT_DEFAULT = 10;

const docs = {
  register: documented({
    operationId: 'register',
    tag: 'accounts',
    summary: 'Register a user in the app of X-App-Code',
    access: 'public',
    headers: appCodeHeader,
    body: registerBody(),
    data: replySchemaOf(accountReplies.User),
    refusals: [errors.USERNAME_TAKEN, errors.INVALID_APP_CODE],
    responses: {
      201: 'The user',
      409: 'The username is taken in this app',
      503: 'Busy: too many registrations waiting to be hashed',
    },
  }),
  login: documented({
    operationId: 'login',
    tag: 'accounts',
    summary: 'Log in: an access token (Bearer JWT) for the other routes',
    access: 'public',
    headers: appCodeHeader,
    body: jsonSchemaOf(loginSchema),
    data: replySchemaOf(accountReplies.LoginReply),
    refusals: [errors.INVALID_CREDENTIALS, errors.LOGIN_RATE_LIMITED, errors.INVALID_APP_CODE],
    responses: {
      200: 'The token (`access_token`, `token_type`, `expires_in` s) and the user',
      401: 'Wrong username or password',
      429: 'Too many failed logins (Retry-After)',
      503: 'Busy: too many logins waiting to be checked',
    },
  }),
  me: documented({
    operationId: 'getMe',
    tag: 'accounts',
    summary: 'The caller',
    access: 'user',
    data: replySchemaOf(accountReplies.User),
    responses: { 200: 'The user', 401: 'No valid bearer token, or its user no longer exists' },
  }),
  lookup: documented({
    operationId: 'lookupUsers',
    tag: 'accounts',
    summary: "Users of the caller's app by id (display names)",
    description: `At most ${MAX_USER_LOOKUP} distinct ids; ids of no user of the caller's app are left out. Each caller may look up ROOMS_USER_LOOKUPS_PER_USER ids per window (default 1000 per 10 minutes), then 429 USER_LOOKUP_RATE_LIMITED.`,
    access: 'user',
    query: {
      type: 'object',
      required: ['ids'],
      properties: { ids: { type: 'string', description: 'Comma-separated user ids: 17,18' } },
    },
    data: replySchemaOf(accountReplies.UserList),
    refusals: [errors.USER_LOOKUP_RATE_LIMITED],
    responses: {
      200: '`list`: `{id, username, nickname, avatar}` of each user found',
      429: 'Too many ids looked up in the window (`Retry-After`)',
    },
  }),
  search: documented({
    operationId: 'searchUsers',
    tag: 'accounts',
    summary: "Users of the caller's app by username or nickname prefix (an invite box)",
    description: `\`prefix\`: 1-${SEARCH_PREFIX_MAX} characters (a username's is matched case-insensitively); \`limit\` 1-${SEARCH_LIMIT_MAX}, default ${SEARCH_LIMIT_DEFAULT}. Answers ids and names only, of the caller's app only. Each search counts \`limit\` users against ROOMS_USER_LOOKUPS_PER_USER, then 429 USER_LOOKUP_RATE_LIMITED.`,
    access: 'user',
    query: {
      type: 'object',
      required: ['prefix'],
      properties: {
        prefix: { type: 'string', minLength: 1, maxLength: SEARCH_PREFIX_MAX },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: SEARCH_LIMIT_MAX,
          default: SEARCH_LIMIT_DEFAULT,
        },
      },
    },
    data: replySchemaOf(accountReplies.UserNames),
    refusals: [errors.USER_LOOKUP_RATE_LIMITED],
    responses: {
      200: '`list`: `{id, username, nickname}` of each user found, by username',
      429: 'Too many users looked up in the window (`Retry-After`)',
    },
  }),
};

/** A search's query, as typed: the prefix once, the limit in decimal digits. */
function searchQueryOf(query: unknown): { prefix: string; limit: number } {
  const { prefix, limit } = (query ?? {}) as { prefix?: unknown; limit?: unknown };
  if (
    typeof prefix !== 'string' ||
    [...prefix].length < 1 ||
    [...prefix].length > SEARCH_PREFIX_MAX
  ) {
    throw errors.VALIDATION(`prefix: 1-${SEARCH_PREFIX_MAX} characters, given once`);
  }
  if (limit === undefined) return { prefix, limit: SEARCH_LIMIT_DEFAULT };
  if (typeof limit !== 'string' || !/^[0-9]{1,3}$/.test(limit)) {
    throw errors.VALIDATION(`limit: 1-${SEARCH_LIMIT_MAX} in decimal digits`);
  }
  const n = Number(limit);
  if (n < 1 || n > SEARCH_LIMIT_MAX) {
    throw errors.VALIDATION(`limit: 1-${SEARCH_LIMIT_MAX} in decimal digits`);
  }
  return { prefix, limit: n };
}

/** What any user of an app may see of another (no app, no dates). */
function publicUserJson(user: User) {
  return { id: user.id, username: user.username, nickname: user.nickname, avatar: user.avatar };
}

export function registerAuthRoutes(app: FastifyInstance, accounts: AccountsService): void {
  if (!app.hasRequestDecorator('auth')) app.decorateRequest('auth', null);

  app.post('/api/v1/auth/register', docs.register, async (request, reply) => {
    const appCode = parseAppCode(request.headers['x-app-code']);
    const user = await accounts.register(appCode, request.body);
    return sendOk(
      request,
      reply,
      declaredReply(accountReplies.User, 'register', userJson(user)),
      201,
    );
  });

  app.post('/api/v1/auth/login', docs.login, async (request, reply) => {
    const appCode = parseAppCode(request.headers['x-app-code']);
    // request.ip honours ROOMS_HTTP_TRUST_PROXY: only trusted proxies may name the client.
    const result = await accounts.login(appCode, request.body, { address: request.ip || null });
    // RFC 6749 §5.1: responses carrying tokens must not be cached.
    reply.header('cache-control', 'no-store');
    const answer = {
      access_token: result.accessToken,
      token_type: 'Bearer',
      expires_in: result.expiresIn,
      user: userJson(result.user),
    };
    return sendOk(request, reply, declaredReply(accountReplies.LoginReply, 'login', answer));
  });

  const me = { preHandler: requireAuth(accounts), ...docs.me };
  app.get('/api/v1/users/me', me, async (request, reply) => {
    const user = await accounts.currentUser(authOf(request));
    if (!user) throw errors.USER_NOT_FOUND();
    return sendOk(request, reply, declaredReply(accountReplies.User, 'getMe', userJson(user)));
  });

  // Suggestions for an invite box: names and ids of the caller's app, by prefix.
  const search = { preHandler: requireAuth(accounts), ...docs.search };
  app.get('/api/v1/users/search', search, async (request, reply) => {
    const { prefix, limit } = searchQueryOf(request.query);
    const users = await accounts.searchUsers(authOf(request), prefix, limit);
    const list = users.map(({ id, username, nickname }) => ({ id, username, nickname }));
    return sendOk(request, reply, declaredReply(accountReplies.UserNames, 'searchUsers', { list }));
  });

  // Names for the ids other answers carry (members, chat, seats): the caller's app only.
  const lookup = { preHandler: requireAuth(accounts), ...docs.lookup };
  app.get('/api/v1/users', lookup, async (request, reply) => {
    const ids = parseUserIds((request.query as { ids?: unknown }).ids);
    const users = await accounts.lookUpUsers(authOf(request), ids);
    const list = users.map(publicUserJson);
    return sendOk(request, reply, declaredReply(accountReplies.UserList, 'lookupUsers', { list }));
  });
}
