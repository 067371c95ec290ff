/**
 * Where the load run's users come from (`--token-source`): `register[:prefix]` signs up new
 * users on the target (its open registration, as the web page does); `file:<path>` reads one
 * access token per line, issued by the team's own login, for targets where registration is
 * closed or accounts come from elsewhere.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { RestClient } from '../../client/src/index.js';

export interface LoadUser {
  readonly id: number;
  readonly token: string;
  /** The REST API as this user. */
  readonly rest: RestClient;
}

export interface UserSource {
  readonly baseUrl: string;
  readonly source: string;
  readonly appCode: string;
}

/** `count` users from the source; throws with a usable message when it cannot. */
export async function loadUsers(
  { baseUrl, source, appCode }: UserSource,
  count: number,
  concurrency = 8,
): Promise<LoadUser[]> {
  const tokens = source.startsWith('file:')
    ? await tokensFromFile(source.slice('file:'.length), count)
    : await registered(baseUrl, appCode, source, count, concurrency);
  const users: LoadUser[] = [];
  for (const token of tokens) {
    const rest = new RestClient({ baseUrl, token: () => token, appCode });
    const me = await rest.call('getMe');
    users.push({ id: me.id, token, rest });
  }
  return users;
}

async function tokensFromFile(file: string, count: number): Promise<string[]> {
  const tokens = (await readFile(file, 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  if (tokens.length < count) {
    throw new Error(`${file} has ${tokens.length} tokens; this run needs ${count}`);
  }
  return tokens.slice(0, count);
}

async function registered(
  baseUrl: string,
  appCode: string,
  source: string,
  count: number,
  concurrency: number,
): Promise<string[]> {
  const match = /^register(?::([a-z0-9_]{1,16}))?$/.exec(source);
  if (!match) throw new Error(`--token-source: register[:prefix] or file:<path>, not ${source}`);
  const prefix = `${match[1] ?? 'load'}_${randomBytes(3).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  const anonymous = new RestClient({ baseUrl, appCode });
  const tokens: string[] = new Array<string>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        const username = `${prefix}_${i}`;
        await anonymous.call('register', { body: { username, password } });
        const login = await anonymous.call('login', { body: { username, password } });
        tokens[i] = login.access_token;
      }
    }),
  );
  return tokens;
}
