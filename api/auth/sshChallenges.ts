import { randomInt } from 'node:crypto';
import { dateOf, type Clock } from '../../infra/clock.ts';
import type { Collection, CollectionSpec, Document, ReadStore } from '../../infra/readstore/readStore.ts';

type ChallengeDocument = Document & { account: string; ip: string | null; expiresAt: string };

/**
 * The challenges of SSH logins (Rucio's `get_ssh_challenge_token`): a random text an account's
 * client signs with its private key within ten seconds. Like tokens they are sessions, kept in
 * the read store outside the projections so that every API process sees them. Unlike tokens they
 * are stored as they are: the login checks a signature of the text itself, and a challenge grants
 * nothing without the private key. One challenge serves one login.
 */
const challengesCollection: CollectionSpec = {
  name: 'auth_ssh_challenges',
  indexes: [{ fields: ['account', 'expiresAt'] }],
};

/** Rucio gives the client ten seconds to sign. */
export const CHALLENGE_LIFETIME_SECONDS = 10;

/**
 * Challenges an account may have open at once: a login tries each against each of the account's
 * keys, so a flood of challenge requests must not make a login cost more than this many tries.
 */
const OPEN_CHALLENGES = 10;

/** Python's `sys.maxsize`: Rucio draws the random part of a challenge from 0 to it. */
const MAX_RANDOM = 2n ** 63n - 1n;

const randomPart = (): string => {
  // randomInt takes at most 48 bits at a time: three draws of 21 bits make 63.
  const parts = [randomInt(2 ** 21), randomInt(2 ** 21), randomInt(2 ** 21)].map(BigInt);
  return (((parts[0]! << 42n) | (parts[1]! << 21n) | parts[2]!) % (MAX_RANDOM + 1n)).toString();
};

export class SshChallenges {
  private readonly challenges: Collection<ChallengeDocument>;

  constructor(
    readStore: ReadStore,
    private readonly clock: Clock,
  ) {
    this.challenges = readStore.collection<ChallengeDocument>(challengesCollection);
  }

  /** A new challenge `challenge-<random>-<account>-<unix expiry>` (Rucio's shape), open for ten seconds. */
  async issue(
    account: string,
    ip: string | null,
    now = dateOf(this.clock),
  ): Promise<{ challenge: string; expiresAt: Date }> {
    await this.challenges.deleteMany({ account, expiresAt: { $lt: now.toISOString() } });
    const open = await this.open(account, now);
    for (const stale of open.slice(0, Math.max(0, open.length - OPEN_CHALLENGES + 1)))
      await this.challenges.deleteOne({ _id: stale });
    const expiresAt = new Date(now.getTime() + CHALLENGE_LIFETIME_SECONDS * 1000);
    const challenge = `challenge-${randomPart()}-${account}-${Math.floor(expiresAt.getTime() / 1000)}`;
    await this.challenges.insertOne({ _id: challenge, account, ip, expiresAt: expiresAt.toISOString() });
    return { challenge, expiresAt };
  }

  /** The account's challenges still open, oldest first. */
  async open(account: string, now = dateOf(this.clock)): Promise<string[]> {
    const found = await this.challenges
      .find({ account, expiresAt: { $gte: now.toISOString() } }, { sort: { account: 1, expiresAt: 1 } })
      .toArray();
    return found.map((document) => document._id);
  }

  /** Closes a challenge a login used; false when another login used it first. */
  async use(challenge: string): Promise<boolean> {
    return (await this.challenges.deleteOne({ _id: challenge })) === 1;
  }
}
