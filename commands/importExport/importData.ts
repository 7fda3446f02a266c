import { accountStreamName } from '../../domain/account/account.ts';
import { createAccount, updateAccount } from '../../domain/account/accountDecider.ts';
import { identityStreamName, type IdentityType } from '../../domain/identity/identity.ts';
import { grantIdentity } from '../../domain/identity/identityDecider.ts';
import { requirePermission } from '../../domain/permission/policy.ts';
import { RSE_PERMISSIONS } from '../../domain/permission/rsePolicy.ts';
import { sameProtocolKey, type ProtocolKey } from '../../domain/rse/protocol.ts';
import { protocolChangesFromRequest, protocolFromRequest } from '../../domain/rse/protocolInput.ts';
import { rseStreamName, type Rse, type RseAttributeValue, type RseProperties } from '../../domain/rse/rse.ts';
import * as rseDecider from '../../domain/rse/rseDecider.ts';
import { Duplicate } from '../../domain/shared/errors.ts';
import type { CommandMetadata, Event } from '../../domain/shared/event.ts';
import { hashPassword } from '../../infra/security/passwords.ts';
import { accountAggregate, loadAccount, loadCaller } from '../caller.ts';
import { handleCommands, type Aggregate, type CommandContext, type Decision } from '../handleCommand.ts';
import { identityAggregate, loadIdentity } from '../identity/identityCommands.ts';
import { loadRse, newRseId, rseAggregate } from '../rse/rseCommands.ts';

/** One RSE of an import, read and checked by the route. */
export type RseImport = Readonly<{
  rse: string;
  /** The record for a new RSE, with Rucio's defaults for what the import leaves out. */
  properties: RseProperties;
  /** What an existing RSE's record changes to. */
  changes: Partial<RseProperties>;
  attributes: Readonly<Record<string, RseAttributeValue>>;
  /**
   * Each protocol's key and request: a protocol the RSE lacks is added from the whole request
   * (impl required), one it has is updated with what the request names.
   */
  protocols: readonly Readonly<{ key: ProtocolKey; request: Readonly<Record<string, unknown>> }>[];
  minFreeSpace: number | null;
}>;

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

type Step<State> = (state: State) => Event[];

/**
 * Decisions gathered per stream: an import may touch one stream many times (an RSE, then its
 * distances), and each stream must be decided once, its steps applied in order.
 */
class ImportPlan {
  private readonly streams = new Map<string, { aggregate: Aggregate<unknown, Event>; steps: Step<unknown>[] }>();

  add<State, E extends Event>(streamName: string, aggregate: Aggregate<State, E>, step: Step<State>): void {
    const entry = this.streams.get(streamName) ?? { aggregate: aggregate as unknown as Aggregate<unknown, Event>, steps: [] };
    entry.steps.push(step as Step<unknown>);
    this.streams.set(streamName, entry);
  }

  decisions(): Decision<unknown, Event>[] {
    return [...this.streams.entries()].map(([streamName, { aggregate, steps }]) => ({
      streamName,
      aggregate,
      decide: (state: unknown) => {
        const events: Event[] = [];
        let current = state;
        for (const step of steps) {
          const decided = step(current);
          events.push(...decided);
          current = decided.reduce(aggregate.evolve, current);
        }
        return events;
      },
    }));
  }
}

/**
 * The RSE's record, attributes, protocols and `MinFreeSpace` limit: a new RSE is created, an
 * existing one edited. Nothing is removed (Rucio's default `edit` synchronisation).
 */
const planRse = (plan: ImportPlan, item: RseImport, current: Rse, metadata: CommandMetadata): string => {
  const rse = item.rse;
  if (current.status === 'Deleted') throw new Duplicate(`RSE '${rse}' already exists!`);
  const rseId = current.status === 'Active' ? current.id : newRseId();
  const add = (step: Step<Rse>) => plan.add(rseStreamName(rse), rseAggregate, step);
  if (current.status === 'Absent') {
    add((state) => rseDecider.createRse({ type: 'CreateRse', data: { rseId, rse, properties: item.properties }, metadata }, state));
  } else {
    add((state) => rseDecider.updateRse({ type: 'UpdateRse', data: { rse, changes: item.changes }, metadata }, state));
  }
  for (const { key, request } of item.protocols) {
    add((state) => {
      if (!rseDecider.requireActive(state, rse).protocols.some((known) => sameProtocolKey(known, key))) {
        const protocol = protocolFromRequest(key.scheme, request);
        return rseDecider.addRseProtocol({ type: 'AddRseProtocol', data: { rse, protocol }, metadata }, state);
      }
      const { scheme: _scheme, hostname: _hostname, port: _port, ...named } = request;
      const changes = protocolChangesFromRequest(named);
      return rseDecider.updateRseProtocols({ type: 'UpdateRseProtocols', data: { rse, ...key, changes }, metadata }, state);
    });
  }
  if (item.minFreeSpace) {
    add((state) => rseDecider.setRseLimit({ type: 'SetRseLimit', data: { rse, name: 'MinFreeSpace', value: item.minFreeSpace! }, metadata }, state));
  }
  for (const [key, value] of Object.entries(item.attributes)) {
    add((state) => rseDecider.setRseAttribute({ type: 'SetRseAttribute', data: { rse, key, value }, metadata }, state));
  }
  return rseId;
};

/** New accounts are USER accounts; known ones get the imported email. Identities are added and mapped. */
const planAccount = async (plan: ImportPlan, context: CommandContext, item: AccountImport, metadata: CommandMetadata) => {
  const account = item.account;
  const existing = await loadAccount(context, account);
  plan.add(accountStreamName(account), accountAggregate, (state) => {
    if (existing.status === 'Absent') {
      return createAccount({ type: 'CreateAccount', data: { account, accountType: 'USER', email: item.email }, metadata }, state);
    }
    if (!item.email) return [];
    return updateAccount({ type: 'UpdateAccount', data: { account, key: 'email', value: item.email }, metadata }, state);
  });
  for (const { identityType, identity, password } of item.identities) {
    const known = await loadIdentity(context, identityType, identity);
    const passwordHash = known.status === 'Absent' && identityType === 'USERPASS' && password ? await hashPassword(password) : null;
    plan.add(identityStreamName(identityType, identity), identityAggregate, (state) => {
      if (state.status === 'Present' && account in state.accounts) return [];
      return grantIdentity(
        { type: 'GrantIdentity', data: { identity, identityType, account, email: item.email, passwordHash, isDefault: false }, metadata },
        state,
      );
    });
  }
};

/**
 * `POST /import`: RSEs (with attributes, protocols, limits), then distances, then accounts with
 * identities. Everything is decided before anything is written, and the writes go to the event
 * store together, so a refused part leaves the whole import undone.
 */
export const importData = async (context: CommandContext, data: DataImport, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  requirePermission(RSE_PERMISSIONS.importData(caller), caller, 'import data');
  const plan = new ImportPlan();
  const rseIds = new Map<string, string>();
  for (const item of data.rses) rseIds.set(item.rse, planRse(plan, item, await loadRse(context, item.rse), metadata));
  const rseIdOf = async (rse: string): Promise<string> => {
    const known = rseIds.get(rse);
    if (known) return known;
    const state = await loadRse(context, rse);
    if (state.status !== 'Active') throw rseDecider.rseNotFound(rse);
    return state.id;
  };
  for (const { source, destination, distance } of data.distances) {
    await rseIdOf(source);
    const destRseId = await rseIdOf(destination);
    const request = { rse: source, destRseId, destRse: destination, distance };
    plan.add(rseStreamName(source), rseAggregate, (state) => {
      const active = rseDecider.requireActive(state, source);
      return destRseId in active.distances
        ? rseDecider.updateRseDistance({ type: 'UpdateRseDistance', data: request, metadata }, state)
        : rseDecider.addRseDistance({ type: 'AddRseDistance', data: request, metadata }, state);
    });
  }
  for (const item of data.accounts) await planAccount(plan, context, item, metadata);
  const outcomes = await handleCommands(context, plan.decisions(), { metadata });
  const positions = outcomes.flatMap((outcome) => (outcome.position === undefined ? [] : [outcome.position]));
  return { position: positions.length > 0 ? positions.reduce((a, b) => (a > b ? a : b)) : undefined };
};
