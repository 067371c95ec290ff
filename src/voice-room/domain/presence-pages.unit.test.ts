/**
 * Pages of the presence book (ListMembers): a page is the full ordered member list sliced
 * after `after`, for any book and any `after` (a member, an id nobody has, one past every
 * member), and it costs the nodes of two root paths plus the page, never the whole room.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  compareUserIds,
  emptyPresenceBook,
  presentEntries,
  presentEntriesAfter,
  withPresence,
  withoutUser,
  type PresenceBook,
  type PresenceNode,
} from './presence-book.js';
import { initialVoiceRoom } from './evolve.js';
import type { Presence } from './types.js';
import { memberPageView } from './view.js';

const presence = (at: number): Presence => ({
  state: 'present',
  joined_at_ms: at,
  last_seen_at_ms: at,
});

function bookOf(userIds: readonly string[]): PresenceBook {
  return userIds.reduce((book, id, i) => withPresence(book, id, presence(i)), emptyPresenceBook());
}

/** What a page must be: the ordered list, from the first member past `after`. */
function sliced(book: PresenceBook, after: string | undefined, limit: number) {
  const all = presentEntries(book);
  const start = after === undefined ? 0 : all.findIndex(([id]) => compareUserIds(id, after) > 0);
  return start === -1 ? [] : all.slice(start, start + limit);
}

/** Account ids of every length: 1-15 digits, so numeric and text order differ. */
const userId = fc
  .oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1, max: 999_999_999_999_999 }))
  .map(String);

describe('presentEntriesAfter', () => {
  it('equals slicing the full ordered list, for any book, `after` and limit (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(userId, { maxLength: 80 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        fc.oneof(
          fc.constant('none'),
          fc.constant('beyond'),
          fc.nat().map((i) => ({ member: i })),
          userId.map((id) => ({ any: id })),
        ),
        fc.integer({ min: 1, max: 40 }),
        (ids, removals, pick, limit) => {
          // Some leave again: the tree's shape is then not only of inserts.
          let book = bookOf(ids);
          for (const i of removals)
            if (ids.length > 0) book = withoutUser(book, ids[i % ids.length]!);
          const members = presentEntries(book).map(([id]) => id);
          const beyond = String(
            members.reduce((max, id) => (BigInt(id) > max ? BigInt(id) : max), 0n) + 1n,
          );
          const after =
            pick === 'none'
              ? undefined
              : pick === 'beyond'
                ? beyond
                : 'member' in pick
                  ? (members[pick.member % Math.max(members.length, 1)] ?? beyond)
                  : pick.any;
          assert.deepEqual(presentEntriesAfter(book, after, limit), sliced(book, after, limit));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('orders decimal ids numerically: after 9 comes 10, then 100', () => {
    const book = bookOf(['100', '9', '10', '1000', '99']);
    const ids = (after: string | undefined, limit: number) =>
      presentEntriesAfter(book, after, limit).map(([id]) => id);
    assert.deepEqual(ids(undefined, 10), ['9', '10', '99', '100', '1000']);
    assert.deepEqual(ids('9', 2), ['10', '99']);
    assert.deepEqual(ids('50', 10), ['99', '100', '1000']); // 50 is no member
    assert.deepEqual(ids('1000', 10), []);
    assert.deepEqual(ids(undefined, 0), []);
    assert.deepEqual(presentEntriesAfter(emptyPresenceBook(), undefined, 5), []);
  });

  it('reads two root paths and the page of a 10,000-member room, not the room', () => {
    const ids = Array.from({ length: 10_000 }, (_, i) => String(1000 + i * 7));
    const book = bookOf(ids);
    const depth = depthOf(book.members);
    const limit = 10;
    for (const after of [undefined, '1000', '36000', '50000', '80000', '99999999']) {
      const touched = new Set<string>();
      const page = presentEntriesAfter(
        { count: book.count, members: counting(book.members, touched) },
        after,
        limit,
      );
      assert.deepEqual(page, sliced(book, after, limit), `after ${after}`);
      assert.ok(
        touched.size <= 2 * depth + limit,
        `after ${after}: ${touched.size} nodes read (depth ${depth})`,
      );
    }
    assert.ok(depth < 60, `a balanced tree: depth ${depth}`);
  });
});

describe('memberPageView', () => {
  it('pages through every member once, in order, `next_after` null on the last page', () => {
    const ids = Array.from({ length: 30 }, (_, i) => String(((i * 37) % 101) + 1));
    const state = { ...initialVoiceRoom(), status: 'active' as const, presence: bookOf(ids) };
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 1; ; pages++) {
      const page = memberPageView(state, after, 7);
      assert.equal(page.online_count, 30);
      seen.push(...page.members.map((m) => m.user_id));
      if (page.next_after === null) {
        assert.equal(pages, 5); // 7 + 7 + 7 + 7 + 2
        break;
      }
      assert.equal(page.next_after, page.members.at(-1)!.user_id);
      after = page.next_after;
    }
    assert.deepEqual(seen, [...ids].sort(compareUserIds));
    // A page that ends exactly at the last member says so: no empty page to ask for.
    assert.equal(memberPageView(state, undefined, 30).next_after, null);
    assert.equal(memberPageView(state, undefined, 29).next_after, seen[28]);
  });
});

function depthOf(node: PresenceNode | null): number {
  return node === null ? 0 : 1 + Math.max(depthOf(node.left), depthOf(node.right));
}

/** A copy of the tree that records each node whose key or children are read. */
function counting(node: PresenceNode | null, touched: Set<string>): PresenceNode | null {
  if (node === null) return null;
  const left = counting(node.left, touched);
  const right = counting(node.right, touched);
  const { key } = node;
  return {
    get key() {
      touched.add(key);
      return key;
    },
    get left() {
      touched.add(key);
      return left;
    },
    get right() {
      touched.add(key);
      return right;
    },
    presence: node.presence,
    earliest_seen_ms: node.earliest_seen_ms,
  };
}
