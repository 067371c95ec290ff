/**
 * The page's session and its REST client (@echochat/client, same origin): the access token
 * of the session (sessionStorage: one per tab, gone with the tab) is sent as a bearer, and a
 * 401 to a call that carried it logs the page out. A refusal is the SDK's ApiError, whose
 * message is the server's, shown as it is (the seed's Chinese messages for meetings).
 */
import { ApiError, RestClient, requestId, type User as ApiUser } from '@echochat/client';

export { ApiError, requestId };

const TOKEN_KEY = 'rooms.token';
const USER_KEY = 'rooms.user';

export type User = ApiUser;

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

/** The API, by operationId: `api.call('joinMeeting', { path: { code }, body })`. */
export const api = new RestClient({
  baseUrl: '',
  token,
  onUnauthorized: () => onUnauthorized(),
});

export function errorText(error: unknown): string {
  if (error instanceof ApiError && error.reason === 'NETWORK') {
    return '无法连接服务器，请检查网络后重试';
  }
  if (error instanceof ApiError && error.reason === 'BAD_ANSWER') {
    return `服务器返回了无法识别的应答 (HTTP ${error.status})`;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
