/**
 * A persistent sorted tree (a treap) made of plain objects, for room states that hold many
 * entries. A change copies only the nodes on the path from the root to the changed key
 * (O(log n) small objects) and never writes to a node, so every earlier state stays as it was
 * and shares the rest: the deciders stay pure, and an update costs O(log n) instead of a copy
 * of every entry. A node may also sum up its subtree (e.g. the smallest of some field): the
 * copies on the path compute it again, so the root's is the whole tree's.
 *
 * Nodes are plain data (no class, no function), so a state holding a tree goes through JSON
 * (snapshots), `structuredClone` and deep-freezing unchanged. Each node's heap priority is a
 * hash of its key, ties broken by key order: the tree's shape depends only on the keys it
 * holds, never on the order they came in, so two trees with the same entries are deep-equal
 * whatever their histories (a snapshot replays to the same state as the whole log).
 */

/** A tree node: a kind of node adds its own fields (a value), which every copy keeps. */
export interface TreeNode<K, N> {
  readonly key: K;
  readonly left: N | null;
  readonly right: N | null;
}

/** How a tree orders its keys, and how it copies a node. */
export interface TreeOrder<K, N> {
  /** Negative, zero or positive, like Array.prototype.sort's comparator. */
  compare(a: K, b: K): number;
  /**
   * A well-mixed hash of the key: the heap order. Keys not chosen against the hash give a
   * depth of O(log n) on average.
   */
  priority(key: K): number;
  /**
   * A new node: `node`'s own fields with these children, and what it sums up of its subtree
   * computed again from them.
   */
  withChildren(node: N, left: N | null, right: N | null): N;
}

/** The node holding `key`, or undefined. */
export function findNode<K, N extends TreeNode<K, N>>(
  root: N | null,
  key: K,
  order: TreeOrder<K, N>,
): N | undefined {
  let node = root;
  while (node !== null) {
    const c = order.compare(key, node.key);
    if (c === 0) return node;
    node = c < 0 ? node.left : node.right;
  }
  return undefined;
}

/** The tree with `node` in it, replacing the node of an equal key (`node`'s children: ignored). */
export function insertNode<K, N extends TreeNode<K, N>>(
  root: N | null,
  node: N,
  order: TreeOrder<K, N>,
): N {
  if (root === null) return order.withChildren(node, null, null);
  const c = order.compare(node.key, root.key);
  // An equal key has the same priority: it sits where the old node sat.
  if (c === 0) return order.withChildren(node, root.left, root.right);
  if (isAbove(order, node.key, root.key)) {
    const [left, right] = split(root, node.key, order);
    return order.withChildren(node, left, right);
  }
  return c < 0
    ? order.withChildren(root, insertNode(root.left, node, order), root.right)
    : order.withChildren(root, root.left, insertNode(root.right, node, order));
}

/** The tree without `key`: the same tree (the same object) when it does not hold it. */
export function removeKey<K, N extends TreeNode<K, N>>(
  root: N | null,
  key: K,
  order: TreeOrder<K, N>,
): N | null {
  if (root === null) return null;
  const c = order.compare(key, root.key);
  if (c === 0) return merge(root.left, root.right, order);
  if (c < 0) {
    const left = removeKey(root.left, key, order);
    return left === root.left ? root : order.withChildren(root, left, root.right);
  }
  const right = removeKey(root.right, key, order);
  return right === root.right ? root : order.withChildren(root, root.left, right);
}

/**
 * Visits the nodes in key order until `visit` returns false, skipping every subtree whose
 * root `enter` refuses (by what the node sums up of it): a walk that stops early or skips
 * costs only the nodes it reaches.
 */
export function visitInOrder<N extends TreeNode<unknown, N>>(
  root: N | null,
  visit: (node: N) => boolean | void,
  enter: (subtree: N) => boolean = () => true,
): boolean {
  if (root === null || !enter(root)) return true;
  return (
    visitInOrder(root.left, visit, enter) &&
    visit(root) !== false &&
    visitInOrder(root.right, visit, enter)
  );
}

/**
 * Visits, in key order, the nodes whose key comes after `after` (every node when it is
 * undefined) until `visit` returns false. The way down to the first of them passes each
 * subtree at or below `after` without entering it, and the walk ends with `visit`: a page of
 * k keys costs O(depth + k) nodes whatever the size of the tree. `after` need not be a key
 * of the tree.
 */
export function visitAfter<K, N extends TreeNode<K, N>>(
  root: N | null,
  after: K | undefined,
  order: Pick<TreeOrder<K, N>, 'compare'>,
  visit: (node: N) => boolean | void,
): void {
  // The nodes still to visit whose right subtrees are not entered yet, the next one on top.
  const pending: N[] = [];
  let node = root;
  while (node !== null) {
    if (after !== undefined && order.compare(node.key, after) <= 0) {
      node = node.right; // this node and its left subtree are all at or below `after`
    } else {
      pending.push(node);
      node = node.left;
    }
  }
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (visit(next) === false) return;
    for (let n = next.right; n !== null; n = n.left) pending.push(n);
  }
}

/**
 * A 32-bit hash of a text with good mixing (FNV-1a, then MurmurHash3's finaliser), so that
 * keys that are close (user ids 1001, 1002, …) get unrelated priorities.
 */
export function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Whether `a` belongs above `b` in the heap: a strict total order, hence one shape per key set. */
function isAbove<K>(order: TreeOrder<K, unknown>, a: K, b: K): boolean {
  const pa = order.priority(a);
  const pb = order.priority(b);
  return pa !== pb ? pa > pb : order.compare(a, b) < 0;
}

/** The keys below `key` and those above it, in two trees (`key` itself is not in the tree). */
function split<K, N extends TreeNode<K, N>>(
  root: N | null,
  key: K,
  order: TreeOrder<K, N>,
): [N | null, N | null] {
  if (root === null) return [null, null];
  if (order.compare(key, root.key) < 0) {
    const [left, right] = split(root.left, key, order);
    return [left, order.withChildren(root, right, root.right)];
  }
  const [left, right] = split(root.right, key, order);
  return [order.withChildren(root, root.left, left), right];
}

/** One tree of two, every key of `low` being below every key of `high`. */
function merge<K, N extends TreeNode<K, N>>(
  low: N | null,
  high: N | null,
  order: TreeOrder<K, N>,
): N | null {
  if (low === null) return high;
  if (high === null) return low;
  return isAbove(order, low.key, high.key)
    ? order.withChildren(low, low.left, merge(low.right, high, order))
    : order.withChildren(high, merge(low, high.left, order), high.right);
}
