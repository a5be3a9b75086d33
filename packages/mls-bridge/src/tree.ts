import { identityOf } from './identity.js';
import type { RatchetTree } from './ts-mls.js';

// Lookups in the ratchet tree by member. Leaves sit at even node indices: leaf i is node 2i.

export function leafAt(tree: RatchetTree, leafIndex: number) {
  const node = tree[leafIndex * 2];
  return node?.nodeType === 'leaf' ? node.leaf : undefined;
}

/** The DID of the member at a leaf, or undefined for a blank leaf or no index. */
export function identityAt(tree: RatchetTree, leafIndex: number | undefined): string | undefined {
  if (leafIndex === undefined) return undefined;
  const leaf = leafAt(tree, leafIndex);
  return leaf && identityOf(leaf.credential);
}

/** The leaf index of a member (what a Remove proposal names), or undefined. */
export function leafIndexOf(tree: RatchetTree, identity: string): number | undefined {
  for (let i = 0; i < tree.length; i += 2) {
    const node = tree[i];
    if (node?.nodeType === 'leaf' && identityOf(node.leaf.credential) === identity) return i / 2;
  }
  return undefined;
}

/** The members' DIDs in leaf order. */
export function membersOf(tree: RatchetTree): string[] {
  const out: string[] = [];
  for (const node of tree) {
    if (node?.nodeType === 'leaf') {
      const id = identityOf(node.leaf.credential);
      if (id !== undefined) out.push(id);
    }
  }
  return out;
}
