/** Test-only: users with tokens and envelope-returning calls against an app's inject. */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

export interface Envelope {
  code: number;
  message: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON under test
  data?: any;
  reason?: string;
}

export interface CallOptions {
  readonly as?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Another node's app (same users and tokens): the call goes there. */
  readonly via?: FastifyInstance;
}

export interface MeetingClient {
  readonly ids: Record<string, number>;
  /** Access tokens by name (e.g. for `/ws?token=`). */
  readonly tokens: Record<string, string>;
  readonly users: (names: readonly string[]) => Promise<void>;
  readonly call: (
    method: 'GET' | 'POST',
    url: string,
    opts?: CallOptions,
  ) => Promise<{ status: number; body: Envelope }>;
}

export function meetingClient(http: () => FastifyInstance): MeetingClient {
  const tokens: Record<string, string> = {};
  const ids: Record<string, number> = {};
  const raw = async (method: 'GET' | 'POST', url: string, opts: CallOptions = {}) => {
    const res = await (opts.via ?? http()).inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        ...(opts.as ? { authorization: `Bearer ${tokens[opts.as]}` } : {}),
        ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...opts.headers,
      },
      ...(opts.body !== undefined
        ? { payload: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) }
        : {}),
    });
    return { status: res.statusCode, body: res.json<Envelope>() };
  };
  return {
    ids,
    tokens,
    call: raw,
    users: async (names) => {
      for (const name of names) {
        // Usernames are 3-32 characters: short test names get a suffix.
        const creds = { username: `${name}_user`, password: 'secret123' };
        const reg = await raw('POST', '/auth/register', { body: creds });
        assert.equal(reg.body.code, 0, JSON.stringify(reg.body));
        const login = await raw('POST', '/auth/login', { body: creds });
        assert.equal(login.body.code, 0, JSON.stringify(login.body));
        const data = login.body.data as { access_token: string; user: { id: number } };
        tokens[name] = data.access_token;
        ids[name] = Number(data.user.id);
      }
    },
  };
}
