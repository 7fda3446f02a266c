import { unknownCommand, type Decider } from '../shared/decider.ts';
import { addArchiveContent, markConstituent, markDatasetArchive, type ArchiveCommand } from './archiveContent.ts';
import { attachDids, detachDids, type AttachDids, type DetachDids } from './didContent.ts';
import { createCollection, registerFile, type CreateCollection, type RegisterFile } from './didCreation.ts';
import {
  eraseExpiredDid,
  followDid,
  removeDeletedChildren,
  resurrectDid,
  setDidStatus,
  setFileAvailability,
  unfollowDid,
  type EraseExpiredDid,
  type FollowDid,
  type RemoveDeletedChildren,
  type ResurrectDid,
  type SetDidStatus,
  type SetFileAvailability,
  type UnfollowDid,
} from './didLifecycle.ts';
import {
  copyDidColumns,
  deleteDidMetadataKey,
  setDidMetadata,
  updateContentEntry,
  type CopyDidColumns,
  type DeleteDidMetadataKey,
  type SetDidMetadata,
  type UpdateContentEntry,
} from './didMetadataChanges.ts';
import { evolveDid, initialDid, type Did, type DidEvent } from './did.ts';
import { attachRule, changeDidRule, detachRule, type DidRuleCommand } from './didRules.ts';

export type DidCommand =
  | CreateCollection
  | RegisterFile
  | AttachDids
  | DetachDids
  | SetDidStatus
  | SetDidMetadata
  | CopyDidColumns
  | UpdateContentEntry
  | DeleteDidMetadataKey
  | FollowDid
  | UnfollowDid
  | ResurrectDid
  | EraseExpiredDid
  | RemoveDeletedChildren
  | SetFileAvailability
  | DidRuleCommand
  | ArchiveCommand;

export const decideDid = (command: DidCommand, state: Did): DidEvent[] => {
  switch (command.type) {
    case 'CreateCollection':
      return createCollection(command, state);
    case 'RegisterFile':
      return registerFile(command, state);
    case 'AttachDids':
      return attachDids(command, state);
    case 'DetachDids':
      return detachDids(command, state);
    case 'SetDidStatus':
      return setDidStatus(command, state);
    case 'SetDidMetadata':
      return setDidMetadata(command, state);
    case 'CopyDidColumns':
      return copyDidColumns(command, state);
    case 'UpdateContentEntry':
      return updateContentEntry(command, state);
    case 'DeleteDidMetadataKey':
      return deleteDidMetadataKey(command, state);
    case 'FollowDid':
      return followDid(command, state);
    case 'UnfollowDid':
      return unfollowDid(command, state);
    case 'ResurrectDid':
      return resurrectDid(command, state);
    case 'EraseExpiredDid':
      return eraseExpiredDid(command, state);
    case 'RemoveDeletedChildren':
      return removeDeletedChildren(command, state);
    case 'SetFileAvailability':
      return setFileAvailability(command, state);
    case 'AttachRule':
      return attachRule(command, state);
    case 'ChangeDidRule':
      return changeDidRule(command, state);
    case 'DetachRule':
      return detachRule(command, state);
    case 'AddArchiveContent':
      return addArchiveContent(command, state);
    case 'MarkConstituent':
      return markConstituent(command, state);
    case 'MarkDatasetArchive':
      return markDatasetArchive(command, state);
    default:
      return unknownCommand('DID', command);
  }
};

export const didDecider: Decider<Did, DidCommand, DidEvent> = {
  name: 'did',
  initialState: initialDid,
  evolve: evolveDid,
  decide: decideDid,
};
