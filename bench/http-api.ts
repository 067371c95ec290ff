/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-return -- the API's JSON, read by benches */
/** The node's REST API as the benches call it: an envelope client and registered users. */

export interface Api {
  call(method: string, path: string, token: string, body?: unknown): Promise<any>;
}

export function api(base: string): Api {
  return {
    async call(method, path, token, body) {
      const res = await fetch(`${base}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as { code: number; message: string; data: any };
      if (json.code !== 0) throw new Error(`${method} ${path}: ${json.code} ${json.message}`);
      return json.data;
    },
  };
}

export async function users(
  base: string,
  names: string[],
): Promise<{ token: string; id: number }[]> {
  const out = [];
  for (const name of names) {
    const creds = { username: name, password: 'secret123' };
    await fetch(`${base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(creds),
    });
    const res = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(creds),
    });
    const data = ((await res.json()) as { data: { access_token: string; user: { id: number } } })
      .data;
    out.push({ token: data.access_token, id: data.user.id });
  }
  return out;
}
