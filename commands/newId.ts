import { randomUUID } from 'node:crypto';

/** A new id as Rucio makes them (rules, requests, RSEs, ...): a uuid4 as 32 lowercase hex digits. */
export const newId = (): string => randomUUID().replaceAll('-', '');
