import { accountStreamName } from '../../domain/account/account.ts';
import { accountDecider, type AccountCommand } from '../../domain/account/accountDecider.ts';
import { identityStreamName, type IdentityType } from '../../domain/identity/identity.ts';
import { identityDecider } from '../../domain/identity/identityDecider.ts';
import { requirePermission } from '../../domain/permission/policy.ts';
import { RSE_PERMISSIONS } from '../../domain/permission/rsePolicy.ts';
import { rseStreamName } from '../../domain/rse/rse.ts';
import { rseDecider, rseNotFound, type ImportRse, type RseCommand } from '../../domain/rse/rseDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommands, lastPosition, StepPlan, type CommandContext } from '../handleCommand.ts';
import { loadIdentity, passwordHashFor } from '../identity/identityCommands.ts';
import { newId } from '../newId.ts';
import { loadRse } from '../rse/rseCommands.ts';

/** One RSE of an import, read and checked by the route (the id is given here, for a new RSE). */
export type RseImport = Omit<ImportRse['data'], 'rseId'>;

export type AccountImport = Readonly<{
  account: string;
  email: string | null;
  identities: readonly Readonly<{ identityType: IdentityType; identity: string; password: string | null }>[];
}>;

export type DataImport = Readonly<{
  rses: readonly RseImport[];
  distances: readonly Readonly<{ source: string; destination: string; distance: number | null }>[];
  accounts: readonly AccountImport[];
}>;

/**
 * `POST /import`: RSEs (with attributes, protocols, limits), then distances, then accounts with
 * identities. Every stream is decided before anything is written, and the writes go to the event
 * store together, so a refused part leaves the whole import undone. A stream the import touches
 * several times (an RSE, then its distances) gets its commands in order.
 */
export const importData = async (context: CommandContext, data: DataImport, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(RSE_PERMISSIONS.importData(caller), caller, 'import data');
  const plan = new StepPlan();
  const onRse = (rse: string, command: RseCommand) => plan.add(rseDecider, rseStreamName(rse), command);
  const rseIds = new Map<string, string>();
  for (const item of data.rses) {
    const current = await loadRse(context, item.rse);
    const rseId = current.status === 'Absent' ? newId() : current.id;
    rseIds.set(item.rse, rseId);
    onRse(item.rse, { type: 'ImportRse', data: { ...item, rseId }, metadata });
  }
  const rseIdOf = async (rse: string): Promise<string> => {
    const known = rseIds.get(rse);
    if (known) return known;
    const state = await loadRse(context, rse);
    if (state.status !== 'Active') throw rseNotFound(rse);
    return state.id;
  };
  for (const { source, destination, distance } of data.distances) {
    await rseIdOf(source);
    const destRseId = await rseIdOf(destination);
    onRse(source, {
      type: 'SetRseDistance',
      data: { rse: source, destRseId, destRse: destination, distance },
      metadata,
    });
  }
  for (const item of data.accounts) {
    const account: AccountCommand = {
      type: 'ImportAccount',
      data: { account: item.account, email: item.email },
      metadata,
    };
    plan.add(accountDecider, accountStreamName(item.account), account);
    for (const { identityType, identity, password } of item.identities) {
      const known = await loadIdentity(context, identityType, identity);
      const passwordHash = known.status === 'Absent' ? await passwordHashFor(identityType, password) : null;
      const grant = {
        type: 'GrantIdentity',
        data: {
          identity,
          identityType,
          account: item.account,
          email: item.email,
          passwordHash,
          isDefault: false,
          keepExisting: true,
        },
        metadata,
      } as const;
      plan.add(identityDecider, identityStreamName(identityType, identity), grant);
    }
  }
  return { position: lastPosition(await handleCommands(context, plan.decisions(), { metadata })) };
};
