/**
 * Rule placement picks RSEs at random, weighted, as Rucio does. Decisions stay pure: the command
 * layer draws a seed and the decision draws from a generator made from it, so the same seed gives
 * the same placement (and a test can choose it).
 */
export type Random = () => number;

/** A small, fast generator of numbers in [0, 1) from a 32-bit seed (mulberry32). */
export const seededRandom = (seed: number): Random => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
};

/** A copy of `items` in random order (Fisher-Yates). */
export const shuffled = <T>(items: readonly T[], random: Random): T[] => {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index -= 1) {
    const other = Math.floor(random() * (index + 1));
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
};
