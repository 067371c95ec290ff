/**
 * The persistent tree against a plain sorted list: random inserts and removals keep the keys
 * in order and findable and the subtree sums right, never change an earlier tree, and give
 * one shape per set of keys.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { deepFreeze } from './testing/decider-spec.js';
import {
  findNode,
  hashText,
  insertNode,
  removeKey,
  visitInOrder,
  type TreeOrder,
} from './persistent-tree.js';

interface Entry {
  readonly key: string;
  readonly value: number;
  /** The smallest value in the subtree. */
  readonly min: number;
  readonly left: Entry | null;
  readonly right: Entry | null;
}

const ORDER: TreeOrder<string, Entry> = {
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  priority: hashText,
  withChildren: ({ key, value }, left, right) => ({
    key,
    value,
    min: Math.min(value, left?.min ?? Infinity, right?.min ?? Infinity),
    left,
    right,
  }),
};

const entry = (key: string, value: number): Entry => ({
  key,
  value,
  min: value,
  left: null,
  right: null,
});

function inOrder(root: Entry | null): [string, number][] {
  const out: [string, number][] = [];
  visitInOrder(root, (node) => {
    out.push([node.key, node.value]);
  });
  return out;
}

/** Every node is above its children in the heap order, and the depth stays logarithmic. */
function checkShape(root: Entry | null): number {
  if (root === null) return 0;
  for (const child of [root.left, root.right]) {
    if (child === null) continue;
    const [p, q] = [hashText(root.key), hashText(child.key)];
    assert.ok(p > q || (p === q && root.key < child.key), `${root.key} above ${child.key}`);
  }
  return 1 + Math.max(checkShape(root.left), checkShape(root.right));
}

const op = fc.record({
  insert: fc.boolean(),
  // Few distinct keys, so that replacing and removing present keys is frequent.
  key: fc.oneof(fc.integer({ min: 0, max: 40 }).map(String), fc.string({ maxLength: 4 })),
  value: fc.integer(),
});

describe('persistent tree', () => {
  it('agrees with a sorted list, keeps old trees, and has one shape per key set', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200, size: 'max' }), (ops) => {
        let root: Entry | null = null;
        const expected = new Map<string, number>();
        const versions: { root: Entry | null; entries: [string, number][] }[] = [];
        for (const { insert, key, value } of ops) {
          const before: Entry | null = root;
          if (insert) {
            root = deepFreeze(insertNode(root, entry(key, value), ORDER));
            expected.set(key, value);
          } else {
            const had = expected.delete(key);
            root = removeKey(root, key, ORDER);
            if (!had) assert.equal(root, before, 'removing an absent key keeps the tree');
          }
          const sorted: [string, number][] = [...expected].sort(([a], [b]) => ORDER.compare(a, b));
          assert.deepEqual(inOrder(root), sorted);
          assert.equal(findNode(root, key, ORDER)?.value, expected.get(key));
          assert.equal(root?.min, sorted.length ? Math.min(...expected.values()) : undefined);
          versions.push({ root, entries: sorted });
        }
        for (const v of versions) assert.deepEqual(inOrder(v.root), v.entries, 'old trees stay');
        // The same keys inserted in another order: the very same tree.
        let rebuilt: Entry | null = null;
        for (const [key, value] of [...expected].reverse()) {
          rebuilt = insertNode(rebuilt, entry(key, value), ORDER);
        }
        assert.deepEqual(rebuilt, root);
        checkShape(root);
      }),
      { numRuns: 300 },
    );
  });

  it('stays shallow for 10,000 sequential ids', () => {
    let root: Entry | null = null;
    for (let i = 1; i <= 10_000; i++) root = insertNode(root, entry(String(1000 + i), i), ORDER);
    const depth = checkShape(root);
    assert.ok(depth < 60, `depth ${depth}`);
    assert.equal(inOrder(root).length, 10_000);
  });

  it('stops a walk when told, and skips the subtrees it is told to', () => {
    let root: Entry | null = null;
    const values = { a: 5, b: 1, c: 7, d: 3, e: 9, f: 2 };
    for (const [key, value] of Object.entries(values))
      root = insertNode(root, entry(key, value), ORDER);
    const seen: string[] = [];
    visitInOrder(root, (node) => {
      seen.push(node.key);
      return node.key < 'c';
    });
    assert.deepEqual(seen, ['a', 'b', 'c']);
    const visited: string[] = [];
    visitInOrder(
      root,
      (node) => {
        visited.push(node.key);
      },
      (subtree) => subtree.min <= 3,
    );
    // Every node whose subtree holds a value <= 3, and only those.
    const expected = Object.keys(values).filter((key) => findNode(root, key, ORDER)!.min <= 3);
    assert.deepEqual(visited, expected);
    assert.ok(expected.includes('b') && expected.includes('d') && expected.includes('f'));
  });
});
