/**
 * The present users of a voice room (VoiceRoomState.presence; why only the present ones:
 * see there), in a persistent tree of plain data (../../domain/persistent-tree.ts) by user
 * id. Each node also keeps the smallest last_seen_at_ms of its subtree, so the root's is the
 * next presence to go stale, and the stale ones are found by entering only the subtrees
 * that hold one. A join, heartbeat or leave copies O(log n) nodes; the next deadline takes no
 * scan, whatever the room's size. A heartbeat stamped earlier than the user's last one (the
 * room moved to a node whose clock is behind) is no special case: the minimums are computed
 * again on the copied path whichever way the time moved.
 */
import {
  findNode,
  hashText,
  insertNode,
  removeKey,
  visitAfter,
  visitInOrder,
  type TreeOrder,
} from '../../domain/persistent-tree.js';
import type { Presence } from './types.js';

export interface PresenceBook {
  /** How many users are present. */
  readonly count: number;
  /** The present users, in {@link compareUserIds} order. */
  readonly members: PresenceNode | null;
}

export interface PresenceNode {
  /** The user id. */
  readonly key: string;
  readonly presence: Presence;
  /** The smallest last_seen_at_ms in this subtree. */
  readonly earliest_seen_ms: number;
  readonly left: PresenceNode | null;
  readonly right: PresenceNode | null;
}

const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/**
 * The members' order: decimal user ids (the API's account ids) in numeric order, then any
 * other id in code-unit order. It is the order the room always listed and expired its
 * members in (a JS object lists keys that are array indices, decimal ids up to 4294967294,
 * first and in numeric order).
 */
export function compareUserIds(a: string, b: string): number {
  const decimalA = DECIMAL.test(a);
  const decimalB = DECIMAL.test(b);
  if (decimalA !== decimalB) return decimalA ? -1 : 1;
  if (decimalA && a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

const BY_USER: TreeOrder<string, PresenceNode> = {
  compare: compareUserIds,
  priority: hashText,
  withChildren: (node, left, right) => ({
    key: node.key,
    presence: node.presence,
    earliest_seen_ms: Math.min(
      node.presence.last_seen_at_ms,
      left?.earliest_seen_ms ?? Infinity,
      right?.earliest_seen_ms ?? Infinity,
    ),
    left,
    right,
  }),
};

export function emptyPresenceBook(): PresenceBook {
  return { count: 0, members: null };
}

/** The user's presence, or undefined when they are not present. */
export function presenceIn(book: PresenceBook, userId: string): Presence | undefined {
  return findNode(book.members, userId, BY_USER)?.presence;
}

/** The book with the user's presence set (added, or replacing theirs). */
export function withPresence(book: PresenceBook, userId: string, presence: Presence): PresenceBook {
  const node = BY_USER.withChildren(
    { key: userId, presence, earliest_seen_ms: presence.last_seen_at_ms, left: null, right: null },
    null,
    null,
  );
  return {
    count: book.count + (presenceIn(book, userId) ? 0 : 1),
    members: insertNode(book.members, node, BY_USER),
  };
}

/** The book without the user: the same book (the same object) when they are not in it. */
export function withoutUser(book: PresenceBook, userId: string): PresenceBook {
  const members = removeKey(book.members, userId, BY_USER);
  return members === book.members ? book : { count: book.count - 1, members };
}

export function presentCount(book: PresenceBook): number {
  return book.count;
}

/** The present users and their presence, in {@link compareUserIds} order. */
export function presentEntries(book: PresenceBook): [string, Presence][] {
  const entries: [string, Presence][] = [];
  visitInOrder(book.members, (node) => {
    entries.push([node.key, node.presence]);
  });
  return entries;
}

/**
 * At most `limit` present users and their presence, the first ones after `after` in
 * {@link compareUserIds} order (from the first when it is undefined; `after` need not be
 * present). A page of a large room: O(log n + limit), never a walk of every member.
 */
export function presentEntriesAfter(
  book: PresenceBook,
  after: string | undefined,
  limit: number,
): [string, Presence][] {
  const page: [string, Presence][] = [];
  if (limit < 1) return page;
  visitAfter(book.members, after, BY_USER, (node) => {
    page.push([node.key, node.presence]);
    return page.length < limit;
  });
  return page;
}

export function presentUserIds(book: PresenceBook): string[] {
  return presentEntries(book).map(([userId]) => userId);
}

/** The smallest last_seen_at_ms of a present user, or null when nobody is present. */
export function earliestLastSeen(book: PresenceBook): number | null {
  return book.members?.earliest_seen_ms ?? null;
}

/**
 * The users whose last_seen_at_ms `isDue` (a test that holds for every time up to some
 * bound), in {@link compareUserIds} order. Enters only the subtrees that hold one.
 */
export function usersLastSeenDue(
  book: PresenceBook,
  isDue: (lastSeenAtMs: number) => boolean,
): string[] {
  const due: string[] = [];
  visitInOrder(
    book.members,
    (node) => {
      if (isDue(node.presence.last_seen_at_ms)) due.push(node.key);
    },
    (subtree) => isDue(subtree.earliest_seen_ms),
  );
  return due;
}

/** Whether `value` is a book (a plain record's values are objects, never a number). */
export function isPresenceBook(value: unknown): value is PresenceBook {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { count?: unknown }).count === 'number'
  );
}
