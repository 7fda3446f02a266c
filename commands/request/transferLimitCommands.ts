import { allowOnly, isAdmin } from '../../domain/permission/policy.ts';
import { evaluateRseExpression } from '../../domain/rse/rseExpression.ts';
import { TRANSFER_LIMITS_STREAM } from '../../domain/request/transferLimit.ts';
import {
  transferLimitsDecider,
  type LimitSelector,
  type SetTransferLimit,
} from '../../domain/request/transferLimitDecider.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, type CommandContext } from '../handleCommand.ts';
import { newId } from '../newId.ts';

/** Rucio's `set_transfer_limit` and `delete_transfer_limit` gateways: root and admins only. */

/** A limit as the API asks for it: the decider's command without the id a new limit gets. */
export type TransferLimitRequest = Omit<SetTransferLimit['data'], 'newId'>;

export const setTransferLimit = async (
  context: CommandContext,
  data: TransferLimitRequest,
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(isAdmin(caller), `${caller.account} cannot set transfer limits. `);
  // Rucio binds the limit to the RSEs its expression selects: one selecting none is refused.
  evaluateRseExpression(data.rseExpression, await context.ruleFacts.rses());
  return handleCommand(context, transferLimitsDecider, TRANSFER_LIMITS_STREAM, {
    type: 'SetTransferLimit',
    data: { ...data, newId: newId() },
    metadata,
  });
};

export const deleteTransferLimit = async (context: CommandContext, data: LimitSelector, metadata: CommandMetadata) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(isAdmin(caller), `${caller.account} cannot delete transfer limits. `);
  return handleCommand(context, transferLimitsDecider, TRANSFER_LIMITS_STREAM, {
    type: 'DeleteTransferLimit',
    data,
    metadata,
  });
};
