/**
 * The join password check in the seed's order: the lock (5 wrong attempts per (user, room
 * code) lock that pair for 10 minutes), then "no password given", then bcrypt (off the
 * event loop, bounded by a WorkGate). Counters live in the shared KeyValue store, so every
 * node of a cluster sees the same lock. A right password clears the counter.
 *
 * Each guess takes its place in the counter (an atomic increment) before bcrypt sees it, so
 * guesses sent at once, on any nodes, cannot all be checked against a lock read before any
 * of them was counted: at most 5 are ever checked per lock window, and a guess arriving
 * when they are taken is `locked` even when right. A checked wrong guess keeps its place; a
 * right one clears the counter.
 */
import type { PasswordHasher } from '../../accounts/password.js';
import type { PasswordVerdict } from '../domain/types.js';
import type { KeyValue } from '../../shared/key-value.js';
import type { WorkGate } from '../../shared/work-gate.js';

export const PASSWORD_MAX_ATTEMPTS = 5;
export const PASSWORD_LOCK_MS = 10 * 60 * 1000;

export interface MeetingPasswords {
  readonly hasher: PasswordHasher;
  /** Bounds the bcrypt calls in flight; a full queue answers 503. */
  readonly gate: WorkGate;
  readonly kv: KeyValue;
}

export function lockKey(appCode: string, roomCode: string, userId: string): string {
  return `meeting:pwd:${appCode}:${roomCode}:${userId}`;
}

export async function hashPassword(p: MeetingPasswords, password: string): Promise<string> {
  return p.gate.run(() => p.hasher.hash(password));
}

export async function judgePassword(
  p: MeetingPasswords,
  meeting: { readonly has_password: boolean; readonly password_hash: string | null },
  attempt: { appCode: string; roomCode: string; userId: string; password: string | undefined },
): Promise<PasswordVerdict> {
  if (!meeting.has_password) return 'not_required';
  const key = lockKey(attempt.appCode, attempt.roomCode, attempt.userId);
  const failures = Number((await p.kv.get(key)) ?? 0);
  if (failures >= PASSWORD_MAX_ATTEMPTS) return 'locked';
  const password = attempt.password;
  if (password === undefined || password === '') return 'missing';
  const hash = meeting.password_hash ?? '';
  // The place is taken once a hashing slot is ours: a guess refused for a full queue (503)
  // was never checked and uses up nothing.
  const verdict = await p.gate.run(async (): Promise<PasswordVerdict> => {
    const place = await p.kv.incr(key, PASSWORD_LOCK_MS);
    if (place > PASSWORD_MAX_ATTEMPTS) return 'locked';
    return (await p.hasher.verify(password, hash)) ? 'ok' : 'wrong';
  });
  if (verdict === 'ok') await p.kv.del(key);
  return verdict;
}
