import { metaConventionStreamName } from '../../domain/metaConvention/metaConvention.ts';
import { metaConventionDecider } from '../../domain/metaConvention/metaConventionDecider.ts';
import { allowOnly, DID_PERMISSIONS } from '../../domain/permission/policy.ts';
import type { CommandMetadata } from '../../domain/shared/event.ts';
import { loadCaller } from '../caller.ts';
import { handleCommand, type CommandContext } from '../handleCommand.ts';

/** Metadata conventions are Rucio's default-policy actions: admins only. */
export const addMetaConventionKey = async (
  context: CommandContext,
  data: { key: string; keyType: unknown; valueType: unknown; valueRegexp: unknown },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(DID_PERMISSIONS.metaConventions(caller), `Account ${caller.account} can not add key.`);
  return handleCommand(context, metaConventionDecider, metaConventionStreamName(data.key), {
    type: 'AddMetaConventionKey',
    data,
    metadata,
  });
};

export const addMetaConventionValue = async (
  context: CommandContext,
  data: { key: string; value: unknown },
  metadata: CommandMetadata,
) => {
  const caller = await loadCaller(context, metadata.account);
  allowOnly(
    DID_PERMISSIONS.metaConventions(caller),
    `Account ${caller.account} can not add value ${String(data.value)} to key ${data.key}.`,
  );
  return handleCommand(context, metaConventionDecider, metaConventionStreamName(data.key), {
    type: 'AddMetaConventionValue',
    data,
    metadata,
  });
};
