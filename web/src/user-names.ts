/**
 * Display names for the user ids the API answers with (members, chat, seats, gifts):
 * `nameOf(id)` gives the name once known and `用户 <id>` meanwhile. Unknown ids asked for in
 * the same tick are looked up together (`GET /users?ids=`, at most MAX_IDS a request, the
 * caller's app only); the map is reactive, so whatever rendered a placeholder re-renders
 * with the name. An id of no user of the app keeps its placeholder; a failed lookup is tried
 * again after a while.
 */
import { reactive, ref } from 'vue';
import { api, type User } from './api';

/** The server's cap (docs/accounts.md). */
const MAX_IDS = 100;
const RETRY_MS = 5_000;
const ACCOUNT_ID = /^[1-9]\d{0,15}$/;

/** id → name; null: no such user in this app. */
const names = reactive(new Map<string, string | null>());
const wanted = new Set<string>();
const asked = new Set<string>();
/** Bumped when failed ids may be asked again: the placeholders that read it re-render. */
const retryRound = ref(0);
let scheduled = false;

type Named = Pick<User, 'id' | 'username' | 'nickname'>;

const display = (u: Named) => u.nickname || u.username;

/** The name of user `id` (a JSON number, or its decimal text); '' for none. */
export function nameOf(id: string | number | null | undefined): string {
  if (id === null || id === undefined || id === '') return '';
  const key = String(id);
  void retryRound.value;
  const known = names.get(key);
  if (known) return known;
  // Only account ids are looked up (a malformed id keeps its placeholder).
  if (known === undefined && ACCOUNT_ID.test(key) && !asked.has(key)) want(key);
  return `用户 ${key}`;
}

/** Names the page already has (the signed-in user, an invite's inviter_name). */
export function knowName(user: Named): void {
  names.set(String(user.id), display(user));
}

/** On sign-out: another account may be of another app. */
export function forgetNames(): void {
  names.clear();
  wanted.clear();
  asked.clear();
}

function want(key: string): void {
  wanted.add(key);
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    const ids = [...wanted];
    wanted.clear();
    for (let i = 0; i < ids.length; i += MAX_IDS) void lookUp(ids.slice(i, i + MAX_IDS));
  });
}

async function lookUp(ids: string[]): Promise<void> {
  for (const id of ids) asked.add(id);
  try {
    const { list } = await api.call('lookupUsers', { query: { ids: ids.join(',') } });
    for (const user of list) knowName(user);
    for (const id of ids) if (!names.has(id)) names.set(id, null);
  } catch {
    // Offline or a node restarting: the placeholders stay and ask again after a pause.
    setTimeout(() => {
      for (const id of ids) asked.delete(id);
      retryRound.value++;
    }, RETRY_MS);
  }
}
