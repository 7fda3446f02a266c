import { pairOf, type ProtocolPair } from './protocolPairs.ts';
import type { Topology, TransferRse } from './topology.ts';

/**
 * The cheapest paths towards a destination (Rucio's `Topology.search_shortest_paths`): Dijkstra's
 * algorithm run backwards from the destination over the distances, where a link is usable only
 * when the two RSEs share a protocol for third-party copies. A path costs the sum of its links'
 * distances plus, for each RSE it passes through, that RSE's hop penalty. Without multihop RSEs
 * only direct links are looked at; with them, a path may pass through RSEs the topology marks
 * for multihop (and through other sources, which `compressed` then cuts off), within
 * `multihop_max_hops` copies when that is set.
 */

/** One copy of a path: from `source` to `dest` with the protocols of `pair`, over a link of `distance`. */
export type PathHop = Readonly<{ source: TransferRse; dest: TransferRse; pair: ProtocolPair; distance: number }>;

/** A path from a source: its copies in order, and its cost (Rucio's cumulated distance). */
export type TransferPath = Readonly<{ hops: readonly PathHop[]; cost: number }>;

/** For each source: its cheapest path, `mismatch` when it has links but no protocol in common on them; absent without a path. */
export type PathsFromSources = ReadonlyMap<string, TransferPath | 'mismatch'>;

type State = {
  node: string;
  hops: number;
  cost: number;
  /** The next state towards the destination, with the link taken; null at the destination. */
  next: { key: string; pair: ProtocolPair; distance: number } | null;
};

/** A binary heap of states by cost, then the RSE's name, then fewer copies: equal paths come out in a stable order. */
class StateQueue {
  private readonly items: { key: string; cost: number; name: string; hops: number }[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: { key: string; cost: number; name: string; hops: number }): void {
    this.items.push(item);
    for (let index = this.items.length - 1; index > 0;) {
      const parent = (index - 1) >> 1;
      if (!this.before(index, parent)) break;
      this.swap(index, parent);
      index = parent;
    }
  }

  pop(): { key: string; cost: number } | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (this.items.length > 0 && last) {
      this.items[0] = last;
      for (let index = 0; ;) {
        const [left, right] = [2 * index + 1, 2 * index + 2];
        let least = index;
        if (left < this.items.length && this.before(left, least)) least = left;
        if (right < this.items.length && this.before(right, least)) least = right;
        if (least === index) break;
        this.swap(index, least);
        index = least;
      }
    }
    return top;
  }

  private before(a: number, b: number): boolean {
    const [x, y] = [this.items[a]!, this.items[b]!];
    if (x.cost !== y.cost) return x.cost < y.cost;
    if (x.name !== y.name) return x.name < y.name;
    return x.hops < y.hops;
  }

  private swap(a: number, b: number): void {
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
  }
}

/** The paths worked out in a topology, by destination and set of sources: the same for every request of a cycle. */
const pathsByTopology = new WeakMap<Topology, Map<string, PathsFromSources>>();

export const shortestPaths = (
  topology: Topology,
  sourceRseIds: readonly string[],
  destRseId: string,
): PathsFromSources => {
  let cache = pathsByTopology.get(topology);
  if (!cache) pathsByTopology.set(topology, (cache = new Map()));
  const cacheKey = `${destRseId} ${[...new Set(sourceRseIds)].sort().join(',')}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  const paths = searchPaths(topology, sourceRseIds, destRseId);
  cache.set(cacheKey, paths);
  return paths;
};

const searchPaths = (topology: Topology, sourceRseIds: readonly string[], destRseId: string): PathsFromSources => {
  const dest = topology.rse(destRseId);
  const result = new Map<string, TransferPath | 'mismatch'>();
  if (!dest) return result;
  const sources = new Set(sourceRseIds.filter((id) => id !== destRseId && topology.rse(id) !== undefined));
  const multihop = topology.multihopRseIds();
  const maxHops = topology.maxHops();
  // With multihop, a source no link starts at is an island: nothing to look for (Rucio).
  const toFind = new Set(multihop.size > 0 ? [...sources].filter((id) => topology.hasLinksFrom(id)) : sources);
  // Keyed by RSE as Rucio's search; by RSE and copies when the copies are bounded, since a
  // cheaper path with too many copies must not hide a dearer one within the bound.
  const keyOf = (node: string, hops: number) => (maxHops === null ? node : `${node}#${hops}`);
  const states = new Map<string, State>();
  const settled = new Set<string>();
  const found = new Map<string, string>();
  const mismatch = new Set<string>();
  const queue = new StateQueue();
  const start = keyOf(destRseId, 0);
  states.set(start, { node: destRseId, hops: 0, cost: 0, next: null });
  queue.push({ key: start, cost: 0, name: dest.rse, hops: 0 });
  while (queue.size > 0 && toFind.size > 0) {
    const { key } = queue.pop()!;
    if (settled.has(key)) continue;
    settled.add(key);
    const state = states.get(key)!;
    if (state.node !== destRseId && toFind.has(state.node)) {
      found.set(state.node, key);
      toFind.delete(state.node);
      if (toFind.size === 0) break;
    }
    // Without multihop, only the destination's own links are looked at.
    if (multihop.size === 0 && state.node !== destRseId) continue;
    const node = topology.rse(state.node)!;
    const nodeCost = state.node === destRseId ? 0 : topology.hopPenalty(node);
    for (const [adjacent, distance] of topology.linksInto(state.node)) {
      if (adjacent === destRseId || !(sources.has(adjacent) || multihop.has(adjacent))) continue;
      const hops = state.hops + 1;
      if (maxHops !== null && hops > maxHops) continue;
      const cost = state.cost + nodeCost + distance;
      const adjacentKey = keyOf(adjacent, hops);
      if (cost >= (states.get(adjacentKey)?.cost ?? Number.POSITIVE_INFINITY)) continue;
      const adjacentRse = topology.rse(adjacent)!;
      const pair = pairOf(topology, node, adjacentRse);
      if (!pair) {
        mismatch.add(adjacent);
        continue;
      }
      states.set(adjacentKey, { node: adjacent, hops, cost, next: { key, pair, distance } });
      queue.push({ key: adjacentKey, cost, name: adjacentRse.rse, hops });
    }
  }
  for (const source of sources) {
    const key = found.get(source);
    if (key === undefined) {
      if (mismatch.has(source)) result.set(source, 'mismatch');
      continue;
    }
    const hops: PathHop[] = [];
    let current = states.get(key)!;
    while (current.next) {
      const next = states.get(current.next.key)!;
      hops.push({
        source: topology.rse(current.node)!,
        dest: topology.rse(next.node)!,
        pair: current.next.pair,
        distance: current.next.distance,
      });
      current = next;
    }
    result.set(source, { hops, cost: states.get(key)!.cost });
  }
  return result;
};
