import { createHash } from 'node:crypto';
import { expireSubscription, recordRetroactivePass } from '../../commands/subscription/subscriptionCommands.ts';
import {
  loadDidFacts,
  recordSubscriptionDryRun,
  transmogrifyDid,
  type RuleOutcome,
} from '../../commands/subscription/subscriptionRuleCommands.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { DID_EVENT_TYPES, didKey, type DidType } from '../../domain/did/did.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { indexedSubscription } from '../../domain/subscription/subscriptionIndex.ts';
import {
  retroactivePass,
  subscriptionCycle,
  transmogrifier,
  type CreateSubscriptionRules,
  type MatchOutput,
  type SubscribedDid,
} from '../../domain/subscription/transmogrifier.ts';
import {
  didFactsOfDocument,
  existingDidsAfter,
  findSubscription,
  subscriptionRecordOf,
  subscriptionsToCheck,
} from '../../projections/subscription/subscriptionQueries.ts';
import { EVENT_JOB_RETRIES, type PlannedJob } from '../eventJobs.ts';
import { asRoot, eventRole, refusalOf, type SkippedItem } from '../role.ts';
import { scheduledRole } from '../scheduledRole.ts';
import type { WorkerContext } from '../workerContext.ts';
import { subscriptionIndexOf } from './subscriptionIndexCache.ts';

/**
 * Rucio's transmogrifier as two roles. `transmogrifier` reacts to the creation of every dataset
 * and container (the job id is the event's, so a replay does nothing twice): it waits until the
 * read models show the creation (so every subscription added before it is in the index), reads
 * the DID from its stream, lets the workflow match it against the index's candidates, and makes
 * the rules through the rule commands as root. `transmogrifier-retroactive` runs on a schedule:
 * subscriptions past their lifetime become INACTIVE, and retroactive ones go through the DIDs that
 * existed before them, a page at a time, recording how far they got.
 */

/** What making a subscription's rules for a DID did, as the job's report counts it. */
const reportRules = (what: string, outcomes: readonly RuleOutcome[], skipped: SkippedItem[]): number => {
  let done = 0;
  for (const outcome of outcomes) {
    if (outcome.outcome === 'created') done += 1;
    else if (outcome.outcome === 'refused')
      skipped.push({
        what: `${what} rule ${outcome.ruleId}${outcome.rse ? ` on ${outcome.rse}` : ''}`,
        reason: outcome.reason ?? 'refused',
      });
  }
  return done;
};

/** What a job has done so far. */
type Report = { done: number; skipped: SkippedItem[] };

/**
 * Carries out match outputs: dry runs recorded, skips reported, and for each DID every rule of
 * every matching subscription in one step (with the end of its `is_new` flag for `processed`).
 */
const makeRules = async (
  context: WorkerContext,
  outputs: readonly MatchOutput[],
  processed: SubscribedDid | undefined,
  metadata: CommandMetadata,
  report: Report,
) => {
  const byDid = new Map<
    string,
    {
      did: SubscribedDid;
      subscriptions: {
        subscriptionId: string;
        subscriptionName: string;
        rules: CreateSubscriptionRules['data']['rules'];
      }[];
    }
  >();
  const entryOf = (did: SubscribedDid) => {
    const key = didKey(did.scope, did.name);
    const entry = byDid.get(key) ?? { did, subscriptions: [] };
    byDid.set(key, entry);
    return entry;
  };
  if (processed) entryOf(processed);
  for (const output of outputs) {
    if (output.type === 'Skipped') report.skipped.push({ ...output.data });
    else if (output.type === 'RecordDryRun') {
      await recordSubscriptionDryRun(context.commands, output.data, metadata);
      report.done += 1;
    } else entryOf(output.data.did).subscriptions.push(output.data);
  }
  for (const [key, { did, subscriptions }] of byDid) {
    const outcomes = await transmogrifyDid(
      context.commands,
      { did, subscriptions, markProcessed: did === processed },
      byDid.size > 1 ? { ...metadata, causationId: `${metadata.causationId}/${key}` } : metadata,
    );
    report.done += reportRules(`${key}`, outcomes, report.skipped);
  }
};

type NewDidJob = Readonly<{ scope: string; name: string; didType: DidType; position: string }>;

/**
 * The transmogrifier's job for a DID the reconciler finds still flagged new, its own job lost:
 * named after the DID and the position of its last change, so finding it twice enqueues it once.
 */
export const transmogrificationJobOf = (did: Omit<NewDidJob, 'position'>, position: number): PlannedJob => {
  const data: NewDidJob = { ...did, position: String(position) };
  const key = createHash('sha1').update(didKey(did.scope, did.name)).digest('hex').slice(0, 24);
  return {
    queue: transmogrifier.name,
    name: 'reconcile',
    data,
    opts: { jobId: `reconcile-new-${key}-${position}`, ...EVENT_JOB_RETRIES },
  };
};

export const transmogrifierRole = eventRole(DID_EVENT_TYPES, {
  name: transmogrifier.name,
  handles: { DidCreated: true },
  concurrency: 32,
  // Files are never matched (Rucio only clears their flag; they are never flagged here).
  jobOf: ({ data }, { position }): NewDidJob | undefined =>
    data.didType === 'FILE'
      ? undefined
      : { scope: data.scope, name: data.name, didType: data.didType, position: position.toString() },
  async process(job, trigger, context) {
    // The index must hold every subscription added before the DID was.
    await context.readModelsAt(BigInt(job.position));
    const [index, did, sections, rses] = await Promise.all([
      subscriptionIndexOf(context.readModels),
      loadDidFacts(context.commands, job),
      context.settings(),
      context.commands.ruleFacts.rses(),
    ]);
    if (!did) return { done: 0, skipped: [{ what: `${job.scope}:${job.name}`, reason: 'the DID is gone' }] };
    const outputs = transmogrifier.decide(
      { did, now: trigger.startedAt.toISOString() },
      {
        subscriptions: index.candidates(did.scope, did.didType),
        rses,
        defaultActivity: settingValue(sections, SETTINGS.rulesDefaultActivity),
      },
    );
    const metadata = asRoot(transmogrifier.name, trigger, `${job.scope}:${job.name}`);
    const report: Report = { done: 0, skipped: [] };
    const processed = outputs.some((output) => output.type === 'MarkDidProcessed')
      ? { scope: did.scope, name: did.name, didType: did.didType }
      : undefined;
    await makeRules(
      context,
      outputs.filter((output): output is MatchOutput => output.type !== 'MarkDidProcessed'),
      processed,
      metadata,
      report,
    );
    return report;
  },
});

export const retroactiveRole = scheduledRole({
  name: retroactivePass.name,
  interval: SETTINGS.transmogrifierRetroactiveInterval,
  settings: [SETTINGS.transmogrifierRetroactiveChunkSize, SETTINGS.transmogrifierRetroactiveMaxDids],
  read: async ({ context }) =>
    (await subscriptionsToCheck(context.readModels)).sort((a, b) => a.policyid - b.policyid || (a.id < b.id ? -1 : 1)),
  async work(candidates, { context, now, setting, asRoot }) {
    const chunkSize = setting(SETTINGS.transmogrifierRetroactiveChunkSize);
    let budget = setting(SETTINGS.transmogrifierRetroactiveMaxDids);
    const defaultActivity = setting(SETTINGS.rulesDefaultActivity);
    const report: Report = { done: 0, skipped: [] };
    const outputs = subscriptionCycle.decide(
      { now },
      {
        subscriptions: candidates.map((subscription) => ({
          id: subscription.id,
          state: subscription.state,
          lifetime: subscription.lifetime,
          retroactivePending: subscription.retroactive_pending,
        })),
      },
    );
    for (const output of outputs) {
      const id = output.data.subscriptionId;
      const refusal = await refusalOf(async () => {
        if (output.type === 'ExpireSubscription') {
          if ((await expireSubscription(context.commands, { id }, asRoot(`expire/${id}`))).expired) report.done += 1;
          return;
        }
        const document = await findSubscription(context.readModels, id);
        if (!document) return;
        const subscription = indexedSubscription(subscriptionRecordOf(document), document.state);
        if (!subscription) {
          report.skipped.push({ what: `${document.account}/${document.name}`, reason: 'its filter does not compile' });
          return;
        }
        let after = document.retroactive_after;
        for (let page = 0; budget > 0; page += 1) {
          const found = await existingDidsAfter(context.readModels, {
            after,
            scopeMatches: subscription.filter.scopeMatches,
            didTypes: subscription.filter.didTypes ?? ['DATASET', 'CONTAINER'],
            limit: Math.min(chunkSize, budget),
          });
          budget -= found.dids.length;
          const rses = await context.commands.ruleFacts.rses();
          const pageOutputs = retroactivePass.decide(
            { subscription, dids: found.dids.map(didFactsOfDocument), last: found.last, now },
            { rses, defaultActivity },
          );
          const metadata = asRoot(`${id}/${page}`);
          await makeRules(
            context,
            pageOutputs.filter(
              (item): item is MatchOutput =>
                item.type === 'CreateSubscriptionRules' || item.type === 'RecordDryRun' || item.type === 'Skipped',
            ),
            undefined,
            metadata,
            report,
          );
          const progress = pageOutputs.find((item) => item.type === 'RecordRetroactiveProgress');
          const complete = pageOutputs.some((item) => item.type === 'CompleteRetroactivePass');
          await recordRetroactivePass(
            context.commands,
            {
              id,
              ...(progress ? { progress: { after: progress.data.after, dids: progress.data.dids } } : {}),
              complete,
            },
            metadata,
          );
          if (complete || !progress) break;
          after = progress.data.after;
        }
      });
      if (refusal) report.skipped.push({ what: id, reason: refusal });
    }
    return report;
  },
});

export const transmogrifierRoles = [transmogrifierRole, retroactiveRole] as const;
