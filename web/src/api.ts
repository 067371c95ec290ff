/**
 * The REST API of a node (same origin): the envelope `{code, message, data}` unwrapped, the
 * access token of the session (sessionStorage: one per tab, gone with the tab) sent as a
 * bearer. A refusal becomes an ApiError whose message is the server's, shown as it is (the
 * seed's Chinese messages for meetings).
 */

const TOKEN_KEY = 'rooms.token';
const USER_KEY = 'rooms.user';

export interface User {
  id: number;
  username: string;
  nickname: string;
  avatar: string;
  app_code: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string | undefined,
  ) {
    super(message);
  }
}

export function token(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storedUser(): User | null {
  const raw = sessionStorage.getItem(USER_KEY);
  return raw ? (JSON.parse(raw) as User) : null;
}

export function saveSession(accessToken: string, user: User): void {
  sessionStorage.setItem(TOKEN_KEY, accessToken);
  sessionStorage.setItem(USER_KEY, JSON.stringify(user));
}

export function clearSession(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(USER_KEY);
}

/** Called when the server says the token is no longer valid (401). */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

interface Envelope<T> {
  code: number;
  message: string;
  data?: T;
  reason?: string;
}

export async function call<T = unknown>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = {};
  const bearer = token();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError('无法连接服务器，请检查网络后重试', 0, 'NETWORK');
  }
  let envelope: Envelope<T>;
  try {
    envelope = (await res.json()) as Envelope<T>;
  } catch {
    throw new ApiError(`服务器返回了无法识别的应答 (HTTP ${res.status})`, res.status, undefined);
  }
  if (envelope.code !== 0) {
    if (res.status === 401 && bearer) onUnauthorized();
    throw new ApiError(envelope.message, res.status, envelope.reason);
  }
  return envelope.data as T;
}

/**
 * A request id for a command, so that a retry of the same click applies once. Plain HTTP on
 * another host than localhost has no `crypto.randomUUID` (secure contexts only, in every
 * browser); `getRandomValues` works everywhere.
 */
export function requestId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');
}

export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
