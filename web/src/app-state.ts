/**
 * What every page shares: the signed-in user, the current route (history API, no router
 * library: four routes), and a notice carried to the next page (e.g. "you were removed from
 * the meeting" on the home page).
 */
import { reactive, ref } from 'vue';
import { clearSession, storedUser, type User } from './api';
import { forgetNames } from './user-names';
import { realtime } from './ws';

export type Route =
  | { name: 'auth' }
  | { name: 'lobby' }
  | { name: 'meeting'; code: string }
  | { name: 'voice'; roomId: string };

export function parseRoute(pathname: string): Route {
  const meeting = /^\/meeting\/(\d{3}-\d{3}-\d{3})\/?$/.exec(pathname);
  if (meeting) return { name: 'meeting', code: meeting[1]! };
  const voice = /^\/voice\/([^/]{1,128})\/?$/.exec(pathname);
  if (voice) return { name: 'voice', roomId: decodeURIComponent(voice[1]!) };
  if (pathname === '/login') return { name: 'auth' };
  return { name: 'lobby' };
}

export function pathOf(route: Route): string {
  switch (route.name) {
    case 'auth':
      return '/login';
    case 'lobby':
      return '/';
    case 'meeting':
      return `/meeting/${route.code}`;
    case 'voice':
      return `/voice/${encodeURIComponent(route.roomId)}`;
  }
}

export const session = reactive<{ user: User | null }>({ user: storedUser() });
export const route = ref<Route>(parseRoute(location.pathname));
/** Shown once on the next page (then cleared by it). */
export const notice = ref<{ text: string; kind: 'info' | 'error' } | null>(null);

export function navigate(next: Route, options: { replace?: boolean } = {}): void {
  const path = pathOf(next);
  if (path !== location.pathname) {
    if (options.replace) history.replaceState(null, '', path);
    else history.pushState(null, '', path);
  }
  route.value = next;
}

window.addEventListener('popstate', () => {
  route.value = parseRoute(location.pathname);
});

export function signOut(message?: string): void {
  clearSession();
  realtime.close();
  forgetNames();
  session.user = null;
  if (message) notice.value = { text: message, kind: 'error' };
  navigate({ name: 'auth' });
}
