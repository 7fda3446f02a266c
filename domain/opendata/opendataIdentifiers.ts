import { unknownCommand, type Decider } from '../shared/decider.ts';
import { OpenDataDuplicateDOI, OpenDataDuplicateRecordID } from './opendataErrors.ts';
import { eventTypes, type Command, type Event } from '../shared/event.ts';

/**
 * The identifiers an open data entry is known by outside (a DOI, a record id), each unique across
 * the catalogue as Rucio's unique columns make them. Each value has a stream naming the entry that
 * holds it, written in the same step as the entry's own change, so that of two entries taking the
 * same value at once the second re-reads the stream and is refused; a value is released when its
 * entry takes another or is deleted. DOIs are compared without case (the DOI system ignores it).
 */

export type OpenDataIdentifierKind = 'doi' | 'record_id';

const keyOf = (kind: OpenDataIdentifierKind, value: string | number): string =>
  kind === 'doi' ? String(value).toLowerCase() : String(value);

export const opendataIdentifierStreamName = (kind: OpenDataIdentifierKind, value: string | number): string =>
  `opendataid-${kind}-${keyOf(kind, value)}`;

type Claim = { kind: OpenDataIdentifierKind; value: string | number; scope: string; name: string };

export type OpenDataIdentifierClaimed = Event<'OpenDataIdentifierClaimed', Claim>;
export type OpenDataIdentifierReleased = Event<'OpenDataIdentifierReleased', Claim>;
export type OpenDataIdentifierEvent = OpenDataIdentifierClaimed | OpenDataIdentifierReleased;

export const OPENDATA_IDENTIFIER_EVENT_TYPES = eventTypes<OpenDataIdentifierEvent>({
  OpenDataIdentifierClaimed: true,
  OpenDataIdentifierReleased: true,
});

/** The entry holding the value, if any. */
export type OpenDataIdentifier = Readonly<{ holder: Readonly<{ scope: string; name: string }> | null }>;

export type ClaimOpenDataIdentifier = Command<'ClaimOpenDataIdentifier', Claim>;
export type ReleaseOpenDataIdentifier = Command<'ReleaseOpenDataIdentifier', Claim>;
export type OpenDataIdentifierCommand = ClaimOpenDataIdentifier | ReleaseOpenDataIdentifier;

const heldBy = (state: OpenDataIdentifier, claim: Claim): boolean =>
  state.holder !== null && state.holder.scope === claim.scope && state.holder.name === claim.name;

export const evolveOpenDataIdentifier = (
  state: OpenDataIdentifier,
  event: OpenDataIdentifierEvent,
): OpenDataIdentifier => {
  switch (event.type) {
    case 'OpenDataIdentifierClaimed':
      return { holder: { scope: event.data.scope, name: event.data.name } };
    case 'OpenDataIdentifierReleased':
      return heldBy(state, event.data) ? { holder: null } : state;
    default:
      return state;
  }
};

/** A value held by another entry is Rucio's OpenDataDuplicateDOI / OpenDataDuplicateRecordID. */
export const claimOpenDataIdentifier = (
  { data }: ClaimOpenDataIdentifier,
  state: OpenDataIdentifier,
): OpenDataIdentifierEvent[] => {
  if (heldBy(state, data)) return [];
  if (state.holder !== null) {
    if (data.kind === 'doi')
      throw new OpenDataDuplicateDOI(`The DOI ${data.value} is already given to another open data entry.`);
    throw new OpenDataDuplicateRecordID(`The record id ${data.value} is already given to another open data entry.`);
  }
  return [{ type: 'OpenDataIdentifierClaimed', data: { ...data } }];
};

/** Only the holder releases a value; anything else changes nothing. */
export const releaseOpenDataIdentifier = (
  { data }: ReleaseOpenDataIdentifier,
  state: OpenDataIdentifier,
): OpenDataIdentifierEvent[] =>
  heldBy(state, data) ? [{ type: 'OpenDataIdentifierReleased', data: { ...data } }] : [];

export const opendataIdentifierDecider: Decider<
  OpenDataIdentifier,
  OpenDataIdentifierCommand,
  OpenDataIdentifierEvent
> = {
  name: 'opendataIdentifier',
  initialState: () => ({ holder: null }),
  evolve: evolveOpenDataIdentifier,
  decide: (command, state) => {
    switch (command.type) {
      case 'ClaimOpenDataIdentifier':
        return claimOpenDataIdentifier(command, state);
      case 'ReleaseOpenDataIdentifier':
        return releaseOpenDataIdentifier(command, state);
      default:
        return unknownCommand('open data identifier', command);
    }
  },
};
